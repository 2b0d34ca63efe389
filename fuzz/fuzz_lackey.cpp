// libFuzzer target for the lackey trace reader. Any input must give records,
// skips or one error, never a crash; the streaming reader must agree, record
// for record, with the line parser applied to each line on its own; and the
// same bytes cut into chunks (of 1 to 64 bytes, from the input's first byte)
// must give, chunk after chunk, what the reader gives: records, references,
// lines, skips and the first bad line with its number and problem.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "lackey.hpp"

namespace {

struct Read {
    std::vector<cachesim::LackeyRecord> records;
    bool failed = false;  // a LackeyError
    std::uint64_t error_line = 0;
    std::string problem;
    std::uint64_t lines = 0, skipped = 0;
    std::string first_skipped;
};

Read read_fd(int fd, bool skip_bad) {
    Read out;
    lseek(fd, 0, SEEK_SET);
    cachesim::LackeyReader reader(fd, "fuzz", skip_bad);
    try {
        cachesim::LackeyRecord batch[5];
        for (std::size_t n; (n = reader.read(batch)) > 0;) out.records.insert(out.records.end(), batch, batch + n);
    } catch (const cachesim::LackeyError& e) {
        out.failed = true;
        out.error_line = e.line();
        out.problem = e.problem();
    }
    out.lines = reader.lines();
    out.skipped = reader.skipped();
    out.first_skipped = reader.first_skipped();
    return out;
}

// The chunks, put together as one reader of the whole file would. No error
// for an input without a record (that is the caller's), so `failed` means a bad line.
Read read_chunks(int fd, std::uint64_t size, std::size_t chunk_bytes, bool skip_bad, bool modify_once) {
    Read out;
    cachesim::LackeyChunks chunks(fd, "fuzz", size, chunk_bytes);
    std::vector<char> text(chunks.text_bytes());
    std::vector<cachesim::LackeyRecord> records(chunks.max_records());
    std::vector<std::uint64_t> refs(2 * chunks.max_records()), want;
    for (std::size_t i = 0; i < chunks.count(); ++i) {
        const auto r = chunks.parse(i, text, records, skip_bad);
        if (r.written != r.records || r.written > records.size()) std::abort();
        // The same chunk as references: lackey_refs() of its records.
        const auto q = chunks.parse(i, text, refs, modify_once, skip_bad);
        want.clear();
        std::array<std::uint64_t, 4> kinds{};
        cachesim::lackey_refs(std::span(records.data(), r.written), modify_once, want, kinds);
        if (q.written != want.size() || !std::equal(want.begin(), want.end(), refs.begin()) || q.kinds != kinds ||
            q.records != r.records || q.lines != r.lines || q.bad_line != r.bad_line || q.problem != r.problem ||
            q.skipped != r.skipped)
            std::abort();
        out.records.insert(out.records.end(), records.begin(),
                           records.begin() + static_cast<std::ptrdiff_t>(r.written));
        if (r.bad_line != 0) {
            if (!skip_bad) {
                out.failed = true;
                out.error_line = out.lines + r.bad_line;
                out.problem = r.problem;
                return out;
            }
            if (out.skipped == 0)
                out.first_skipped = "line " + std::to_string(out.lines + r.bad_line) + ": " + r.problem;
        }
        out.skipped += r.skipped;
        out.lines += r.lines;
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // The parser, line by line.
    std::vector<cachesim::LackeyRecord> expect, expect_before_bad;
    std::uint64_t bad = 0, lines = 0, first_bad = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        cachesim::LackeyRecord r;
        const auto kind = cachesim::parse_lackey_line(text.substr(start, end - start), r);
        ++lines;
        if (kind == cachesim::LackeyLine::Record) {
            expect.push_back(r);
            if (bad == 0) expect_before_bad.push_back(r);
        }
        if (kind == cachesim::LackeyLine::Bad && bad++ == 0) first_bad = lines;
        start = end + 1;
    }
    // The reader, over the same bytes as a file.
    const int fd = memfd_create("fuzz_lackey", 0);
    if (fd < 0) return 0;
    if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
        close(fd);
        return 0;
    }
    const Read strict = read_fd(fd, false);
    if (strict.failed != (bad > 0 || expect.empty()))
        std::abort();  // an error exactly when a line is bad or none is an access
    if (bad > 0 && strict.error_line != first_bad) std::abort();
    if (!strict.failed && strict.records != expect) std::abort();
    const Read lenient = read_fd(fd, true);
    if (lenient.failed != expect.empty()) std::abort();
    if (!lenient.failed && lenient.records != expect) std::abort();
    if (lenient.skipped != bad || lenient.lines != lines) std::abort();
    // The chunks, of a size the input chooses.
    const std::size_t chunk_bytes = size == 0 ? 1 : 1 + data[0] % 64;
    const bool modify_once = size > 1 && (data[1] & 1);
    const Read chunked = read_chunks(fd, size, chunk_bytes, true, modify_once);
    if (chunked.records != expect || chunked.lines != lenient.lines || chunked.skipped != lenient.skipped ||
        chunked.first_skipped != lenient.first_skipped)
        std::abort();
    const Read chunked_strict = read_chunks(fd, size, chunk_bytes, false, modify_once);
    if (chunked_strict.failed != (bad > 0)) std::abort();
    if (bad > 0 && (chunked_strict.error_line != strict.error_line || chunked_strict.problem != strict.problem))
        std::abort();
    if (chunked_strict.records != expect_before_bad) std::abort();
    close(fd);
    return 0;
}
