// libFuzzer target for the lackey trace reader. Any input must give records,
// skips or one error, never a crash; and the streaming reader must agree,
// record for record, with the line parser applied to each line on its own.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "cachebook/lackey.hpp"

namespace {

std::vector<cachebook::LackeyRecord> read_fd(int fd, bool skip_bad, bool& failed, std::uint64_t& skipped) {
    std::vector<cachebook::LackeyRecord> out;
    failed = false;
    lseek(fd, 0, SEEK_SET);
    try {
        cachebook::LackeyReader reader(fd, "fuzz", skip_bad);
        cachebook::LackeyRecord batch[5];
        for (std::size_t n; (n = reader.read(batch)) > 0;) out.insert(out.end(), batch, batch + n);
        skipped = reader.skipped();
    } catch (const cachebook::LackeyError&) {
        failed = true;
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // The parser, line by line.
    std::vector<cachebook::LackeyRecord> expect;
    std::uint64_t bad = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        cachebook::LackeyRecord r;
        const auto kind = cachebook::parse_lackey_line(text.substr(start, end - start), r);
        if (kind == cachebook::LackeyLine::Record) expect.push_back(r);
        if (kind == cachebook::LackeyLine::Bad) ++bad;
        start = end + 1;
    }
    // The reader, over the same bytes as a file.
    const int fd = memfd_create("fuzz_lackey", 0);
    if (fd < 0) return 0;
    if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
        close(fd);
        return 0;
    }
    bool failed = false;
    std::uint64_t skipped = 0;
    const auto strict = read_fd(fd, false, failed, skipped);
    if (failed != (bad > 0 || expect.empty()))
        std::abort();  // an error exactly when a line is bad or none is an access
    if (!failed && strict != expect) std::abort();
    const auto lenient = read_fd(fd, true, failed, skipped);
    if (failed != expect.empty()) std::abort();
    if (!failed && (lenient != expect || skipped != bad)) std::abort();
    close(fd);
    return 0;
}
