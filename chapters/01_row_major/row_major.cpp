#include "row_major.hpp"

#include "cachebook/cache.hpp"

namespace ch01 {

// [snippet: locate]
Location locate(const ArrayShape& a, std::size_t i, std::size_t j, std::size_t line_bytes) {
    // Row-major: all of row 0, then all of row 1, ... Column-major: column by column.
    const std::uint64_t index = a.layout == Layout::RowMajor ? static_cast<std::uint64_t>(i) * a.cols + j
                                                             : static_cast<std::uint64_t>(j) * a.rows + i;
    const std::uint64_t address = a.base + index * a.elem;
    return Location{address, address / line_bytes, address % line_bytes};
}
// [end: locate]

// [snippet: address-example]
AddressExample address_example(std::size_t line_bytes) {
    AddressExample ex;
    ex.shape = ArrayShape{0x1000, 100, 300, sizeof(double), Layout::RowMajor};
    ex.line_bytes = line_bytes;
    ex.at_2_5 = locate(ex.shape, 2, 5, line_bytes);
    ex.at_2_6 = locate(ex.shape, 2, 6, line_bytes);
    ex.at_3_5 = locate(ex.shape, 3, 5, line_bytes);
    ex.row_stride_bytes = ex.at_3_5.address - ex.at_2_5.address;
    ex.lines_between_rows = static_cast<double>(ex.row_stride_bytes) / static_cast<double>(line_bytes);
    ArrayShape col = ex.shape;
    col.layout = Layout::ColumnMajor;
    ex.at_2_5_column_major = locate(col, 2, 5, line_bytes);
    return ex;
}
// [end: address-example]

// [snippet: stepper]
StepperRun run_stepper(bool by_rows, std::size_t cache_lines, std::size_t rows, std::size_t cols, std::size_t elem,
                       std::size_t line_bytes) {
    StepperRun run{by_rows ? "row" : "column", rows, cols, elem, line_bytes, cache_lines, {}, 0, 0};
    cachebook::Cache cache(cachebook::CacheConfig::fully_associative(cache_lines, line_bytes));
    const ArrayShape a{0, rows, cols, elem, Layout::RowMajor};
    auto visit = [&](std::size_t i, std::size_t j) {
        const Location at = locate(a, i, j, line_bytes);
        const bool hit = cache.access(at.address).hit;
        run.steps.push_back(Step{i, j, at.line, hit, cache.resident_lines()});
        ++(hit ? run.hits : run.misses);
    };
    if (by_rows) {
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) visit(i, j);
    } else {
        for (std::size_t j = 0; j < cols; ++j)
            for (std::size_t i = 0; i < rows; ++i) visit(i, j);
    }
    return run;
}
// [end: stepper]

}  // namespace ch01
