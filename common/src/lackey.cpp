#include "cachebook/lackey.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cachebook {
namespace {

struct HexTable {
    signed char value[256];
    constexpr HexTable() : value{} {
        for (int c = 0; c < 256; ++c) value[c] = -1;
        for (int c = '0'; c <= '9'; ++c) value[c] = static_cast<signed char>(c - '0');
        for (int c = 'a'; c <= 'f'; ++c) value[c] = static_cast<signed char>(c - 'a' + 10);
        for (int c = 'A'; c <= 'F'; ++c) value[c] = static_cast<signed char>(c - 'A' + 10);
    }
};
constexpr HexTable kHex;
constexpr std::size_t kLackeyPadding = 64;  // newlines64() reads 64 bytes at a time

bool is_blank(unsigned char c) {
    return c == ' ' || c == '\t';
}

// Eight bytes at once (SWAR), for the hex address: real addresses have 8 to 12
// digits, and a digit-at-a-time loop is a chain of dependent shifts.
constexpr std::uint64_t kOnes = 0x0101010101010101ull;
constexpr std::uint64_t kHigh = 0x8080808080808080ull;

inline std::uint64_t load8(const unsigned char* p) {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    return x;  // little-endian: p[0] is the lowest byte
}

// The high bit of each byte is set where lo <= byte <= hi; exact up to the
// first byte of 0x80 or more (whose carry may spoil the bytes above it).
inline std::uint64_t bytes_in(std::uint64_t x, unsigned char lo, unsigned char hi) {
    return (x + kOnes * (0x80u - lo)) & ~(x + kOnes * (0x7fu - hi)) & ~x & kHigh;
}

// High bit set in each byte that is a hex digit, up to the first that is not.
inline std::uint64_t hex_bytes(std::uint64_t x) {
    return bytes_in(x, '0', '9') | bytes_in(x | (kOnes * 0x20), 'a', 'f');
}

// The value of 8 hex digits, p[0] the most significant.
inline std::uint64_t hex8(std::uint64_t x) {
    std::uint64_t v = (x & (kOnes * 0x0f)) + ((x >> 6) & kOnes) * 9;  // each byte its digit's value
    v = ((v << 4) | (v >> 8)) & 0x00ff00ff00ff00ffull;
    v = ((v << 8) | (v >> 16)) & 0x0000ffff0000ffffull;
    return ((v << 16) | (v >> 32)) & 0x00000000ffffffffull;
}

// The bytes of x after its first n (1 to 8) moved to the top, with '0's below: n digits as 8.
inline std::uint64_t right_align(std::uint64_t x, unsigned n) {
    if (n == 8) return x;
    return (x << (8 * (8 - n))) | ((kOnes * '0') >> (8 * n));
}

// Reads 1 to 16 hex digits at p; sets `count` (0 when there are none or more
// than 16: the caller's careful loop handles those). Reads up to 16 bytes.
inline std::uint64_t fast_hex(const unsigned char* p, unsigned& count) {
    const std::uint64_t x0 = load8(p);
    const std::uint64_t stop0 = ~hex_bytes(x0) & kHigh;
    if (stop0) {
        count = static_cast<unsigned>(std::countr_zero(stop0)) / 8;
        return count == 0 ? 0 : hex8(right_align(x0, count));
    }
    const std::uint64_t x1 = load8(p + 8);
    const std::uint64_t stop1 = ~hex_bytes(x1) & kHigh;
    if (!stop1) {
        count = 0;
        return 0;
    }
    const unsigned extra = static_cast<unsigned>(std::countr_zero(stop1)) / 8;  // digits after the first 8
    count = 8 + extra;
    if (extra == 0) return hex8(x0);
    const std::uint64_t low = hex8(load8(p + extra));  // the last 8 digits
    return hex8(right_align(x0, extra)) << 32 | low;
}

// What fast_line() expects of a line by where its comma is (y[d], d address
// digits) and its '\n' (y[e], e - d - 1 size digits), y being the line from
// its first digit: hex digits before the comma, decimal ones after it (as
// bits of hex | decimal << 16), and how to decode them. A shape it does not
// take (no address digit, no size digit or more than 4, more than 13
// address digits) expects bit 40, which no line has.
struct Shape {
    std::uint64_t want;
    std::uint32_t zeros;         // '0' bytes below the size digits moved up
    std::uint8_t size_shift;     // 8 x (4 - size digits)
    std::uint8_t address_shift;  // 64 - 4 x address digits
    std::uint8_t size_digits;
};
struct Shapes {
    Shape at[15][16];  // [d][e]; d = 14: no comma in y[0 .. 13]
    // Every entry is set here (GCC 12 left some of an array's default member
    // initializers at zero in a constexpr constructor).
    constexpr Shapes() : at{} {
        for (unsigned d = 0; d < 15; ++d)
            for (unsigned e = 0; e < 16; ++e) {
                const unsigned s = e - d - 1;  // wraps around when e <= d
                Shape& x = at[d][e];
                const bool taken = d >= 1 && d <= 13 && s >= 1 && s <= 4;
                x.want = taken ? ((1ull << d) - 1) | ((((1ull << e) - 1) & ~((2ull << d) - 1)) << 16)
                               : std::uint64_t{1} << 40;
                x.zeros = taken ? static_cast<std::uint32_t>(0x30303030ull >> (8 * s)) : 0;
                x.size_shift = static_cast<std::uint8_t>(taken ? 8 * (4 - s) : 0);
                x.address_shift = static_cast<std::uint8_t>(taken ? 64 - 4 * d : 0);
                x.size_digits = static_cast<std::uint8_t>(taken ? s : 0);
            }
    }
};
constexpr Shapes kShapes;

// The common shape of a line (whose '\n' is at p[len]), parsed without a
// branch per byte or per digit: " L addr,size\n" (L, S or M) or "I  addr,size\n",
// 1 to 13 hex digits, a size of 1 to 4 digits, 1 to kLackeyMaxSize, and
// nothing else. Any other line (blanks elsewhere, a '\r', a log line, a bad
// line) returns false and goes to parse_line(), which gives every verdict; a
// line taken here is one parse_line() reads the same way. Reads 24 bytes from p.
[[gnu::always_inline]] inline bool fast_line(const unsigned char* p, std::size_t len, LackeyRecord& out) {
#if defined(__SSE2__)
    constexpr auto head_of = [](char a, char b, char c) {
        return static_cast<std::uint32_t>(static_cast<unsigned char>(a)) |
               static_cast<std::uint32_t>(static_cast<unsigned char>(b)) << 8 |
               static_cast<std::uint32_t>(static_cast<unsigned char>(c)) << 16;
    };
    std::uint32_t head;
    std::memcpy(&head, p, 4);
    head &= 0xffffff;
    const bool data = (head == head_of(' ', 'L', ' ')) | (head == head_of(' ', 'S', ' ')) |
                      (head == head_of(' ', 'M', ' '));
    const bool instruction = head == head_of('I', ' ', ' ');
    if (!(data | instruction) || len > 18) return false;
    // The rest of the line, from its first digit: y[e] is its '\n'.
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 3));
    const auto e = static_cast<unsigned>(len - 3);
    // A byte is a decimal digit when (byte - '0') is at most 9 unsigned; a hex
    // letter when (byte | 0x20) - 'a' is at most 5.
    const __m128i dd = _mm_sub_epi8(y, _mm_set1_epi8('0'));
    const __m128i is_decimal = _mm_cmpeq_epi8(_mm_min_epu8(dd, _mm_set1_epi8(9)), dd);
    const __m128i l = _mm_sub_epi8(_mm_or_si128(y, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
    const __m128i is_letter = _mm_cmpeq_epi8(_mm_min_epu8(l, _mm_set1_epi8(5)), l);
    const auto decimal = static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(is_decimal)));
    const auto hex = decimal | static_cast<unsigned>(_mm_movemask_epi8(is_letter));
    const auto comma = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(y, _mm_set1_epi8(','))));
    const auto d = static_cast<unsigned>(std::countr_zero(comma | 0x4000u));  // the first comma, or 14
    const Shape& shape = kShapes.at[d][e];
    if (((hex | decimal << 16) & shape.want) != shape.want) return false;
    // The address: each byte's digit value (any byte gives 0 to 15), two
    // digits to a byte, the first 16 read as one number, shifted down to its d.
    const __m128i v = _mm_add_epi8(_mm_and_si128(y, _mm_set1_epi8(0x0f)), _mm_and_si128(is_letter, _mm_set1_epi8(9)));
    const __m128i pairs = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(v, 4), _mm_srli_epi16(v, 8)), _mm_set1_epi16(0xff));
    const auto nibbles = static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)));
    // The size: one digit, or its digits moved to the top of 4 bytes, '0's
    // below, then two digits to a byte pair and two pairs to a number.
    std::uint32_t size;
    if (shape.size_digits == 1) {
        size = static_cast<std::uint32_t>(p[4 + d] - '0');
    } else {
        std::uint32_t digits;
        std::memcpy(&digits, p + 4 + d, 4);
        std::uint64_t z = static_cast<std::uint64_t>(digits) << shape.size_shift | shape.zeros;
        z = ((z & 0x0f0f0f0f) * 2561) >> 8;
        z = ((z & 0x00ff00ff) * 6553601) >> 16;
        size = static_cast<std::uint32_t>(z & 0xffff);
    }
    if (size - 1 >= kLackeyMaxSize) return false;  // 0 or too large
    out.op = data ? static_cast<char>(p[1]) : 'I';
    out.size = size;
    out.address = __builtin_bswap64(nibbles) >> shape.address_shift;
    return true;
#else
    (void)p;
    (void)len;
    (void)out;
    return false;
#endif
}

// Bit i set where q[i] is '\n', for 64 bytes from q. The reader finds where
// lines end 64 bytes at a time, so a line's parse does not wait on the one
// before it (each line's start comes from this mask, not from its parse).
inline std::uint64_t newlines64(const unsigned char* q) {
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n');
    auto bits = [&](int k) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * k));
        return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, nl))));
    };
    return bits(0) | bits(1) << 16 | bits(2) << 32 | bits(3) << 48;
#else
    std::uint64_t m = 0;
    for (unsigned i = 0; i < 64; ++i) m |= static_cast<std::uint64_t>(q[i] == '\n') << i;
    return m;
#endif
}

// How a byte reads in a message: 'x' when printable, byte 0x00 otherwise.
std::string shown(unsigned char c) {
    if (c == '\n') return "the end of the line";
    if (c >= 0x20 && c < 0x7f) return fmt::format("'{}'", static_cast<char>(c));
    return fmt::format("byte 0x{:02x} (binary data?)", c);
}

// What parse_line() found. The hot path only returns a code; the message is
// built (by message()) only for a bad line.
enum Code : unsigned char {
    kRecord,
    kSkip,
    kNoSpaceAfterOp,
    kNoAddress,
    kAddressTooLarge,
    kMissingComma,
    kBadHexDigit,
    kNoSize,
    kSizeTooLarge,
    kSizeZero,
    kTrailingText,
    kTooLong,
    kUnknownOp,
};

struct Parsed {
    Code code;
    const unsigned char* at;  // the offending byte, for a bad line
};

std::string message(Code code, unsigned char op, unsigned char at) {
    switch (code) {
        case kNoSpaceAfterOp:
            return fmt::format("expected a space after '{}', found {}", static_cast<char>(op), shown(at));
        case kNoAddress:
            return fmt::format("expected a hex address, found {}", shown(at));
        case kAddressTooLarge:
            return "address does not fit in 64 bits";
        case kMissingComma:
            return "missing ',' between address and size";
        case kBadHexDigit:
            return fmt::format("bad hex digit {} in the address", shown(at));
        case kNoSize:
            return fmt::format("expected a decimal size after ',', found {}", shown(at));
        case kSizeTooLarge:
            return fmt::format("size exceeds {} bytes", kLackeyMaxSize);
        case kSizeZero:
            return "size 0";
        case kTrailingText:
            return fmt::format("unexpected {} after the size", shown(at));
        case kTooLong:
            return fmt::format("line longer than {} bytes", kLackeyMaxLine);
        case kUnknownOp:
            return fmt::format("unknown operation {} (expected I, L, S or M)", shown(at));
        default:
            return "no problem";
    }
}

// Parses the line that starts at `p`. The line ends at the first '\n' at or
// after `p`, which must exist: it is the sentinel that stops every loop, so
// the hot path needs no bounds checks. On a record or skip, `end` is that '\n';
// on a bad line the caller finds it.
[[gnu::always_inline]] inline Parsed parse_line(const unsigned char* p, const unsigned char*& end, LackeyRecord& out) {
    const unsigned char* const start = p;
    while (is_blank(*p)) ++p;
    const unsigned char op = *p;
    if (op == 'L' || op == 'S' || op == 'M' || op == 'I') {
        ++p;
        if (!is_blank(*p)) [[unlikely]]
            return {kNoSpaceAfterOp, p};
        do ++p;
        while (is_blank(*p));
        std::uint64_t address = 0;
        const unsigned char* digits = p;
        unsigned count = 0;
        address = fast_hex(p, count);
        p += count;
        if (count == 0)
            for (signed char d; (d = kHex.value[*p]) >= 0; ++p) address = address << 4 | static_cast<std::uint64_t>(d);
        if (p - digits > 16) [[unlikely]] {  // fits only if the extra leading digits are zeros
            for (const unsigned char* q = digits; q < p - 16; ++q)
                if (*q != '0') return {kAddressTooLarge, q};
        }
        if (*p != ',') [[unlikely]] {
            if (p == digits) return {kNoAddress, p};
            if (*p == '\n' || is_blank(*p) || *p == '\r') return {kMissingComma, p};
            return {kBadHexDigit, p};
        }
        if (p == digits) [[unlikely]]
            return {kNoAddress, p};
        ++p;
        std::uint32_t size = 0;
        digits = p;
        for (; static_cast<unsigned>(*p - '0') < 10u; ++p) size = size * 10 + static_cast<std::uint32_t>(*p - '0');
        if (p - digits > 4) [[unlikely]] {  // at most 4 significant digits (kLackeyMaxSize), no wrap-around
            const unsigned char* q = digits;
            while (q < p - 1 && *q == '0') ++q;
            if (p - q > 4) return {kSizeTooLarge, q};
        }
        if (size > kLackeyMaxSize) [[unlikely]]
            return {kSizeTooLarge, digits};
        if (p == digits) [[unlikely]]
            return {kNoSize, p};
        if (size == 0) [[unlikely]]
            return {kSizeZero, p};
        while (*p != '\n') [[unlikely]] {
                if (!is_blank(*p) && *p != '\r') return {kTrailingText, p};
                ++p;
            }
        if (static_cast<std::size_t>(p - start) > kLackeyMaxLine) [[unlikely]]
            return {kTooLong, p};
        out.op = static_cast<char>(op);
        out.size = size;
        out.address = address;
        end = p;
        return {kRecord, p};
    }
    if ((op == '=' && p[1] == '=') || (op == '-' && p[1] == '-')) {  // valgrind's own log
        while (*p != '\n') ++p;
        end = p;
        return {kSkip, p};
    }
    while (is_blank(*p) || *p == '\r') ++p;
    if (*p == '\n') {
        if (static_cast<std::size_t>(p - start) > kLackeyMaxLine) return {kTooLong, p};
        end = p;
        return {kSkip, p};
    }
    return {kUnknownOp, p};
}

// The kind of line, and its problem if bad; sets `end` to the line's '\n'.
LackeyLine classify(const unsigned char* p, const unsigned char*& end, LackeyRecord& out, std::string* problem) {
    const Parsed r = parse_line(p, end, out);
    if (r.code == kRecord) return LackeyLine::Record;
    if (r.code == kSkip) return LackeyLine::Skip;
    if (problem) {
        const unsigned char* q = p;
        while (is_blank(*q)) ++q;
        *problem = message(r.code, *q, *r.at);
    }
    const unsigned char* q = r.at;
    while (*q != '\n') ++q;
    end = q;
    return LackeyLine::Bad;
}

bool is_log_line(const char* p, const char* end) {
    while (p < end && is_blank(static_cast<unsigned char>(*p))) ++p;
    return end - p >= 2 && ((p[0] == '=' && p[1] == '=') || (p[0] == '-' && p[1] == '-'));
}

}  // namespace

LackeyError::LackeyError(const std::string& source, std::uint64_t line, const std::string& problem)
    : std::runtime_error(line == 0 ? fmt::format("{}: {}", source, problem)
                                   : fmt::format("{}:{}: {}", source, line, problem)),
      line_(line),
      problem_(problem) {}

LackeyLine parse_lackey_line(std::string_view line, LackeyRecord& out, std::string* problem) {
    if (line.size() > kLackeyMaxLine) {
        if (is_log_line(line.data(), line.data() + line.size())) return LackeyLine::Skip;
        if (problem) *problem = fmt::format("line longer than {} bytes", kLackeyMaxLine);
        return LackeyLine::Bad;
    }
    if (line.find('\n') != std::string_view::npos) {
        if (problem) *problem = "a newline inside the line";
        return LackeyLine::Bad;
    }
    unsigned char text[kLackeyMaxLine + 1 + kLackeyPadding] = {};
    std::memcpy(text, line.data(), line.size());
    text[line.size()] = '\n';
    const unsigned char* end = nullptr;
    return classify(text, end, out, problem);
}

LackeyReader::LackeyReader(const std::string& path, bool skip_bad) : skip_bad_(skip_bad) {
    if (path == "-") {
        fd_ = 0;
        source_ = "<stdin>";
    } else {
        fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open trace {}: {}", path, std::strerror(errno)));
        owns_fd_ = true;
        source_ = path;
    }
    // + 1: room for the '\n' that ends an unterminated last line; the padding lets
    // the parser read 16 bytes at a time near the end.
    buffer_.resize(kLackeyWindow + 1 + kLackeyPadding);
}

LackeyReader::LackeyReader(int fd, std::string source, bool skip_bad)
    : fd_(fd), skip_bad_(skip_bad), source_(std::move(source)) {
    buffer_.resize(kLackeyWindow + 1 + kLackeyPadding);
}

LackeyReader::~LackeyReader() {
    if (owns_fd_) ::close(fd_);
}

void LackeyReader::bad_line(std::uint64_t line, const std::string& problem) {
    if (!skip_bad_) throw LackeyError(source_, line, problem);
    if (skipped_ == 0) first_skipped_ = fmt::format("line {}: {}", line, problem);
    ++skipped_;
}

bool LackeyReader::refill() {
    if (eof_) return false;
    char* buf = buffer_.data();
    const std::size_t tail = data_end_ - parse_end_;  // an incomplete last line
    std::memmove(buf, buf + parse_end_, tail);
    data_end_ = tail;
    pos_ = parse_end_ = 0;
    for (;;) {
        const ssize_t got = ::read(fd_, buf + data_end_, kLackeyWindow - data_end_);
        if (got < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(fmt::format("cannot read {}: {}", source_, std::strerror(errno)));
        }
        if (got == 0) {
            eof_ = true;
            if (discarding_long_line_) data_end_ = 0;
            if (data_end_ == 0) return false;
            buf[data_end_++] = '\n';
            parse_end_ = data_end_;
            return true;
        }
        const std::size_t old_end = data_end_;
        data_end_ += static_cast<std::size_t>(got);
        if (discarding_long_line_) {  // the rest of a too-long line, skipped
            const void* nl = std::memchr(buf + old_end, '\n', data_end_ - old_end);
            if (!nl) {
                data_end_ = 0;
                continue;
            }
            const std::size_t after = static_cast<std::size_t>(static_cast<const char*>(nl) - buf) + 1;
            std::memmove(buf, buf + after, data_end_ - after);
            data_end_ -= after;
            discarding_long_line_ = false;
        }
        const void* last = data_end_ ? ::memrchr(buf, '\n', data_end_) : nullptr;
        if (last) {
            parse_end_ = static_cast<std::size_t>(static_cast<const char*>(last) - buf) + 1;
            return true;
        }
        if (data_end_ > kLackeyMaxLine) {
            // A line this long is no trace line: report it (or skip it) without holding it all.
            const bool log = is_log_line(buf, buf + data_end_);
            ++line_;
            if (!log) bad_line(line_, fmt::format("line longer than {} bytes", kLackeyMaxLine));
            discarding_long_line_ = true;
            data_end_ = 0;
        }
    }
}

// A line fast_line() did not take: a record (written to *out; returns true),
// a skipped line, or a bad line (thrown, or counted with skip_bad). Kept out
// of read()'s loop, whose registers it would otherwise take. Sets `p` past
// the line.
[[gnu::noinline]] bool LackeyReader::slow_line(const unsigned char*& p, std::uint64_t line, LackeyRecord* out) {
    const unsigned char* end = nullptr;  // parse_line() finds the '\n' read() found
    const Parsed r = parse_line(p, end, *out);
    if (r.code != kRecord && r.code != kSkip) {
        std::string problem;
        classify(p, end, *out, &problem);
        line_ = line;
        pos_ = static_cast<std::size_t>(end + 1 - reinterpret_cast<const unsigned char*>(buffer_.data()));
        bad_line(line, problem);
    }
    p = end + 1;
    return r.code == kRecord;
}

std::size_t LackeyReader::read(std::span<LackeyRecord> out) {
    LackeyRecord* o = out.data();
    LackeyRecord* const o_end = out.data() + out.size();
    while (o < o_end) {
        if (pos_ >= parse_end_ && !refill()) break;
        const auto* base = reinterpret_cast<const unsigned char*>(buffer_.data());
        const unsigned char* p = base + pos_;
        const unsigned char* const limit = base + parse_end_;
        std::uint64_t line = line_;
        const unsigned char* block = p;
        std::uint64_t newlines = newlines64(block);
        while (p < limit && o < o_end) {
            // limit - 1 is a '\n', so this stops.
            while (newlines == 0) newlines = newlines64(block += 64);
            const unsigned char* const nl = block + std::countr_zero(newlines);
            newlines &= newlines - 1;
            ++line;
            if (fast_line(p, static_cast<std::size_t>(nl - p), *o)) [[likely]] {
                ++o;
                p = nl + 1;
            } else {
                o += slow_line(p, line, o);
            }
        }
        line_ = line;
        pos_ = static_cast<std::size_t>(p - base);
    }
    const auto n = static_cast<std::size_t>(o - out.data());
    records_ += n;
    if (n == 0 && records_ == 0 && eof_) {
        if (skipped_ > 0)
            throw LackeyError(source_, 0,
                              fmt::format("no valid access line ({} malformed line{} skipped; first: {})", skipped_,
                                          skipped_ == 1 ? "" : "s", first_skipped_));
        throw LackeyError(source_, 0, "empty trace: no I, L, S or M line");
    }
    return n;
}

}  // namespace cachebook
