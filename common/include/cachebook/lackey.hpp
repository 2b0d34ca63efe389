#pragma once
/// @file lackey.hpp
/// @brief A streaming reader of valgrind lackey memory traces.
///
/// `valgrind --tool=lackey --trace-mem=yes` writes one line per memory access:
/// `I  0040051e,1` (an instruction fetch), ` L 7ff000384,4` (a load),
/// ` S ...` (a store), ` M ...` (a modify: a load then a store). The address
/// is hexadecimal, the size decimal. Blank lines and valgrind's own log lines
/// (starting with `==` or `--`) are skipped. Anything else is an error naming
/// the line number and the problem.
///
/// The reader holds a fixed window of the input (kLackeyWindow bytes), never
/// the whole file, so a trace of any length runs in bounded memory.

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cachebook {

/// One access of a trace.
struct LackeyRecord {
    char op = 0;                ///< 'I', 'L', 'S' or 'M'
    std::uint32_t size = 0;     ///< bytes accessed, 1 to kLackeyMaxSize
    std::uint64_t address = 0;  ///< first byte accessed
    friend bool operator==(const LackeyRecord&, const LackeyRecord&) = default;
};

/// The longest line accepted; real lackey lines are under 30 bytes.
inline constexpr std::size_t kLackeyMaxLine = 256;
/// The largest access size accepted (an XSAVE area is under 4 KiB).
inline constexpr std::uint32_t kLackeyMaxSize = 8192;
/// Bytes of input the reader holds at once. Small enough to stay in a core's
/// L2 between read() copying it in and the parser reading it (a 1 MiB window
/// made the copy alone cost about four times as much).
inline constexpr std::size_t kLackeyWindow = std::size_t{1} << 16;

/// A malformed trace. what() is "<source>:<line>: <problem>" (line 0: the whole input).
class LackeyError : public std::runtime_error {
public:
    LackeyError(const std::string& source, std::uint64_t line, const std::string& problem);
    /// 1-based line number, or 0 when the problem is the input as a whole.
    [[nodiscard]] std::uint64_t line() const { return line_; }
    /// The problem without the source and line.
    [[nodiscard]] const std::string& problem() const { return problem_; }

private:
    std::uint64_t line_;
    std::string problem_;
};

/// What one line holds.
enum class LackeyLine {
    Record,  ///< an access
    Skip,    ///< a blank line or a valgrind log line
    Bad,     ///< malformed
};

/// Parses one line (without its newline). On Bad, `problem` (if given) says what is wrong.
LackeyLine parse_lackey_line(std::string_view line, LackeyRecord& out, std::string* problem = nullptr);

/// Reads a lackey trace from a file or standard input, in batches.
class LackeyReader {
public:
    /// Opens `path` ("-" is standard input). Throws std::runtime_error if it cannot be opened.
    /// With `skip_bad`, malformed lines are counted and skipped instead of thrown.
    explicit LackeyReader(const std::string& path, bool skip_bad = false);
    /// Reads from an open descriptor, which stays open; `source` names it in errors.
    LackeyReader(int fd, std::string source, bool skip_bad = false);
    ~LackeyReader();
    LackeyReader(const LackeyReader&) = delete;
    LackeyReader& operator=(const LackeyReader&) = delete;

    /// Fills `out` with the next records; returns how many, 0 at the end.
    /// Throws LackeyError on a malformed line (without skip_bad), on an input
    /// with no access at all, and std::runtime_error on a read error.
    std::size_t read(std::span<LackeyRecord> out);

    /// Lines read so far.
    [[nodiscard]] std::uint64_t lines() const { return line_; }
    /// Records returned so far.
    [[nodiscard]] std::uint64_t records() const { return records_; }
    /// Malformed lines skipped (only with skip_bad).
    [[nodiscard]] std::uint64_t skipped() const { return skipped_; }
    /// "line N: problem" of the first skipped line, or empty.
    [[nodiscard]] const std::string& first_skipped() const { return first_skipped_; }
    [[nodiscard]] const std::string& source() const { return source_; }

private:
    bool refill();
    void bad_line(std::uint64_t line, const std::string& problem);
    bool slow_line(const unsigned char*& p, std::uint64_t line, LackeyRecord* out);

    int fd_ = -1;
    bool owns_fd_ = false;
    bool skip_bad_ = false;
    bool eof_ = false;
    bool discarding_long_line_ = false;
    std::string source_;
    std::vector<char> buffer_;
    std::size_t pos_ = 0;        // next unparsed byte
    std::size_t parse_end_ = 0;  // one past the last complete line
    std::size_t data_end_ = 0;   // one past the last byte read
    std::uint64_t line_ = 0;
    std::uint64_t records_ = 0;
    std::uint64_t skipped_ = 0;
    std::string first_skipped_;
};

}  // namespace cachebook
