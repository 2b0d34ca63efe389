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

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cachesim {

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
    /// The error of an input without a single access: empty, or every line skipped.
    static LackeyError no_records(const std::string& source, std::uint64_t skipped, const std::string& first_skipped);
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

/// Bytes of a trace file in one chunk of LackeyChunks (see there).
inline constexpr std::size_t kLackeyChunk = std::size_t{1} << 17;

/// A trace in a regular file, cut into chunks of bytes that threads can
/// parse at the same time. A chunk holds the lines that start in its byte
/// range, so each line belongs to exactly one chunk, and a chunk can be
/// parsed knowing nothing of the others. Taken together, in order, the chunks
/// give what LackeyReader gives: the same records, lines and verdicts.
class LackeyChunks {
public:
    /// Over an open regular file of `size` bytes; `fd` stays open and is read
    /// with pread(), so any number of threads may parse at once.
    LackeyChunks(int fd, std::string source, std::uint64_t size, std::size_t chunk_bytes = kLackeyChunk);
    ~LackeyChunks();
    LackeyChunks(const LackeyChunks&) = delete;
    LackeyChunks& operator=(const LackeyChunks&) = delete;

    /// What parse() found in one chunk. Line numbers count from the chunk's first line.
    struct Parsed {
        std::size_t written = 0;               ///< records, or references, written to the front of the output
        std::uint64_t records = 0;             ///< records found
        std::array<std::uint64_t, 4> kinds{};  ///< records by operation: I, L, S, M (references only)
        std::uint64_t lines = 0;     ///< lines that start in the chunk (up to a bad line, if parsing stopped there)
        std::uint64_t bad_line = 0;  ///< the first malformed line (1-based), or 0
        std::string problem;         ///< what is wrong with it
        std::uint64_t skipped = 0;   ///< malformed lines skipped (skip_bad)
    };

    [[nodiscard]] std::size_t count() const { return count_; }
    /// Bytes parse() needs in `text`.
    [[nodiscard]] std::size_t text_bytes() const;
    /// Records parse() may write to `out`, at most.
    [[nodiscard]] std::size_t max_records() const;
    [[nodiscard]] const std::string& source() const { return source_; }

    /// Reads and parses chunk `index`. Without `skip_bad` it stops at the first
    /// malformed line; with it, it skips and counts them. Throws
    /// std::runtime_error on a read error.
    Parsed parse(std::size_t index, std::span<char> text, std::span<LackeyRecord> out, bool skip_bad) const;
    /// The same, written as references (see read_lackey_refs()); `refs` holds 2 x max_records().
    Parsed parse(std::size_t index, std::span<char> text, std::span<std::uint64_t> refs, bool modify_once,
                 bool skip_bad) const;

    /// Says that chunks before `index` are parsed and their records used: the
    /// pages of the file below them are let go, so memory stays bounded
    /// however long the trace. Call from one thread at a time, with rising `index`.
    void release(std::size_t index);

private:
    template <class Sink>
    Parsed parse_into(std::size_t index, std::span<char> text, Sink& sink, bool skip_bad) const;

    int fd_;
    std::string source_;
    std::uint64_t size_;
    std::size_t chunk_;
    std::size_t count_;
    const unsigned char* map_ = nullptr;  // the whole file, when it could be mapped
    std::uint64_t released_ = 0;          // bytes of the mapping let go
};

/// What a whole trace held.
struct LackeyTotals {
    std::uint64_t lines = 0;               ///< lines read
    std::uint64_t records = 0;             ///< records found
    std::array<std::uint64_t, 4> kinds{};  ///< records by operation: I, L, S, M (read_lackey_refs() only)
    std::uint64_t skipped = 0;             ///< malformed lines skipped (skip_bad)
    std::string first_skipped;             ///< "line N: problem" of the first, or empty
};

/// Reads the trace at `path` ("-": standard input) and hands all its records,
/// in order and in batches, to `consume`, always on the calling thread. A
/// regular file is parsed in chunks (LackeyChunks); with `threads` 2 or more,
/// by this thread and one more at once (this one also consumes). Other input
/// (a pipe) goes through LackeyReader; with `threads` 2 or more, on a second
/// thread while this one consumes. Errors are LackeyReader's, with the same
/// line numbers.
LackeyTotals read_lackey(const std::string& path, bool skip_bad, unsigned threads,
                         const std::function<void(std::span<const LackeyRecord>)>& consume,
                         std::size_t chunk_bytes = kLackeyChunk);

/// read_lackey(), handing over references instead of records: each record as
/// the accesses Cache::access_batch() takes, the address with bit 0 set for a
/// write. L gives a read, S a write, M a read then a write (one write with
/// `modify_once`), I nothing. Bit 0 of the address is lost, so these suit
/// lines of 2 bytes or more. Skips the records in between, and their copy.
LackeyTotals read_lackey_refs(const std::string& path, bool skip_bad, unsigned threads, bool modify_once,
                              const std::function<void(std::span<const std::uint64_t>)>& consume,
                              std::size_t chunk_bytes = kLackeyChunk);

/// References of `records` (as read_lackey_refs() makes them) appended to
/// `refs`; adds the records of each kind (I, L, S, M) to `kinds`.
void lackey_refs(std::span<const LackeyRecord> records, bool modify_once, std::vector<std::uint64_t>& refs,
                 std::array<std::uint64_t, 4>& kinds);

}  // namespace cachesim
