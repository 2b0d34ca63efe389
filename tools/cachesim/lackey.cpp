#include "lackey.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cachesim {
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
constexpr std::size_t kLackeyPadding = 64;  // the parser reads up to 32 bytes past a line's start

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

// What a record line's first three bytes must be, by its second byte ('L',
// 'S', 'M', or ' ' for "I  "), and the record's operation.
struct Heads {
    std::uint32_t head[256];
    char op[256];
    constexpr Heads() : head{}, op{} {
        for (auto& h : head) h = 0xffffffffu;  // no line's three bytes
        head[static_cast<unsigned char>(' ')] = 'I' | ' ' << 8 | ' ' << 16;
        op[static_cast<unsigned char>(' ')] = 'I';
        for (const unsigned char c : {'L', 'S', 'M'}) {
            head[c] = ' ' | static_cast<std::uint32_t>(c) << 8 | ' ' << 16;
            op[c] = static_cast<char>(c);
        }
    }
};
constexpr Heads kHeads;

#if defined(__SSE2__)
// Which bytes of y are decimal digits and which hex letters: a byte is a
// decimal digit when (byte - '0') is at most 9 unsigned, a hex letter when
// (byte | 0x20) - 'a' is at most 5.
struct DigitBytes {
    __m128i decimal, letter;
};
[[gnu::always_inline]] inline DigitBytes digit_bytes(__m128i y) {
    const __m128i dd = _mm_sub_epi8(y, _mm_set1_epi8('0'));
    const __m128i l = _mm_sub_epi8(_mm_or_si128(y, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
    return {_mm_cmpeq_epi8(_mm_min_epu8(dd, _mm_set1_epi8(9)), dd),
            _mm_cmpeq_epi8(_mm_min_epu8(l, _mm_set1_epi8(5)), l)};
}

// The 16 hex digits of y, two to a byte, the first of each pair the high one:
// byte k of the result is digits 2k and 2k + 1 (any byte counts as some digit).
[[gnu::always_inline]] inline std::uint64_t digit_pairs(__m128i y, const DigitBytes& kind) {
    const __m128i v = _mm_add_epi8(_mm_and_si128(y, _mm_set1_epi8(0x0f)), _mm_and_si128(kind.letter, _mm_set1_epi8(9)));
    const __m128i pairs = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(v, 4), _mm_srli_epi16(v, 8)), _mm_set1_epi16(0xff));
    return static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)));
}
#endif

// Two lines in a row, both in the shape lackey prints most: 8 address digits
// and a one-digit size, " L 0804a01c,4\n" (14 bytes each). Both are checked,
// and both addresses decoded, with the same vector instructions. Reads 32
// bytes from p; false when either line has another shape.
[[gnu::always_inline]] inline bool canonical_pair(const unsigned char* p, LackeyRecord& a, LackeyRecord& b) {
#if defined(__SSE2__)
    std::uint32_t head_a, head_b, tail_a, tail_b;
    std::memcpy(&head_a, p, 4);
    std::memcpy(&head_b, p + 14, 4);
    std::memcpy(&tail_a, p + 11, 4);  // ',', the size, '\n', the next line's first byte
    std::memcpy(&tail_b, p + 25, 4);
    const unsigned size_a = (tail_a >> 8 & 0xff) - '0', size_b = (tail_b >> 8 & 0xff) - '0';
    constexpr std::uint32_t kTail = ',' | '\n' << 16;
    const bool shape = ((head_a & 0xffffff) == kHeads.head[p[1]]) & ((head_b & 0xffffff) == kHeads.head[p[15]]) &
                       ((tail_a & 0xff00ff) == kTail) & ((tail_b & 0xff00ff) == kTail) & (size_a - 1 < 9) &
                       (size_b - 1 < 9);
    // The 8 digits of each line, side by side.
    const __m128i y = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 3)),
                                         _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 17)));
    const DigitBytes kind = digit_bytes(y);
    if (!shape || _mm_movemask_epi8(_mm_or_si128(kind.decimal, kind.letter)) != 0xffff) return false;
    const std::uint64_t bytes = digit_pairs(y, kind);  // 4 bytes a line
    a.op = kHeads.op[p[1]];
    a.size = size_a;
    a.address = __builtin_bswap32(static_cast<std::uint32_t>(bytes));
    b.op = kHeads.op[p[15]];
    b.size = size_b;
    b.address = __builtin_bswap32(static_cast<std::uint32_t>(bytes >> 32));
    return true;
#else
    (void)p;
    (void)a;
    (void)b;
    return false;
#endif
}

// The common shape of a line (whose '\n' is at p[len]), parsed without a
// branch per byte or per digit: " L addr,size\n" (L, S or M) or "I  addr,size\n",
// 1 to 13 hex digits, a size of 1 to 4 digits, 1 to kLackeyMaxSize, and
// nothing else. Any other line (blanks elsewhere, a '\r', a log line, a bad
// line) returns false and goes to parse_line(), which gives every verdict; a
// line taken here is one parse_line() reads the same way. Reads 24 bytes from p.
[[gnu::always_inline]] inline bool fast_line(const unsigned char* p, std::size_t len, LackeyRecord& out) {
#if defined(__SSE2__)
    std::uint32_t head;
    std::memcpy(&head, p, 4);
    if ((head & 0xffffff) != kHeads.head[p[1]] || len > 18) return false;
    // The rest of the line, from its first digit: y[e] is its '\n'.
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 3));
    const auto e = static_cast<unsigned>(len - 3);
    const DigitBytes kind = digit_bytes(y);
    const auto decimal = static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(kind.decimal)));
    const auto hex = decimal | static_cast<unsigned>(_mm_movemask_epi8(kind.letter));
    const auto comma = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(y, _mm_set1_epi8(','))));
    const auto d = static_cast<unsigned>(std::countr_zero(comma | 0x4000u));  // the first comma, or 14
    const Shape& shape = kShapes.at[d][e];
    if (((hex | decimal << 16) & shape.want) != shape.want) return false;
    // The address: the first 16 bytes read as one number, shifted down to its d digits.
    const std::uint64_t nibbles = digit_pairs(y, kind);
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
    out.op = kHeads.op[p[1]];
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

// The first '\n' at or after p, 16 bytes at a time (one step for any real line).
inline const unsigned char* next_newline(const unsigned char* p) {
#if defined(__SSE2__)
    for (;; p += 16) {
        const auto m = static_cast<unsigned>(_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), _mm_set1_epi8('\n'))));
        if (m != 0) return p + std::countr_zero(m);
    }
#else
    while (*p != '\n') ++p;
    return p;
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
        case kUnknownOp:
            return fmt::format("unknown operation {} (expected I, L, S or M)", shown(at));
        default:
            return "no problem";
    }
}

// Parses the line that starts at `p`. The line ends at the first '\n' at or
// after `p`, which must exist: it is the sentinel that stops every loop, so
// the hot path needs no bounds checks. On a record or skip, `end` is that '\n';
// on a bad line the caller finds it. The caller has already rejected a line
// longer than kLackeyMaxLine.
[[gnu::always_inline]] inline Parsed parse_line(const unsigned char* p, const unsigned char*& end, LackeyRecord& out) {
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

// A valgrind log line: "==" or "--" after blanks, within its first
// kLackeyMaxLine + 1 bytes. Only those bytes are looked at, so every reader
// gives the same verdict whatever part of a long line it holds.
bool is_log_line(const char* p, const char* end) {
    if (static_cast<std::size_t>(end - p) > kLackeyMaxLine + 1) end = p + kLackeyMaxLine + 1;
    while (p < end && is_blank(static_cast<unsigned char>(*p))) ++p;
    return end - p >= 2 && ((p[0] == '=' && p[1] == '=') || (p[0] == '-' && p[1] == '-'));
}

// The verdict on a line longer than kLackeyMaxLine, from its first bytes
// [p, end): skipped if it is a log line, else bad whatever it holds.
LackeyLine long_line(const char* p, const char* end, std::string* problem) {
    if (is_log_line(p, end)) return LackeyLine::Skip;
    if (problem) *problem = fmt::format("line longer than {} bytes", kLackeyMaxLine);
    return LackeyLine::Bad;
}

// A line fast_line() did not take, [p, nl): a record (written to *out), a
// skipped line, or a bad one (*problem says why). A line longer than
// kLackeyMaxLine is bad whatever it holds, unless it is a log line. Kept out
// of parse_lines()'s loop, whose registers it would otherwise take.
[[gnu::noinline]] LackeyLine slow_line(const unsigned char* p, const unsigned char* nl, LackeyRecord* out,
                                       std::string* problem) {
    if (static_cast<std::size_t>(nl - p) > kLackeyMaxLine)
        return long_line(reinterpret_cast<const char*>(p), reinterpret_cast<const char*>(nl), problem);
    const unsigned char* end = nullptr;
    return classify(p, end, *out, problem);
}

// Where parse_lines() puts records: as they are, into a span.
struct RecordSink {
    LackeyRecord* o;
    LackeyRecord* end;
    [[nodiscard]] bool room() const { return o < end; }
    [[nodiscard]] bool room2() const { return end - o >= 2; }
    void put(const LackeyRecord& r) { *o++ = r; }
};

// Or as references (read_lackey_refs()), counting the records of each kind.
struct RefSink {
    std::uint64_t* o;
    std::uint64_t* end;
    const std::uint64_t* ops;  // by operation: what RefOps says
    std::array<std::uint64_t, 4> kinds = {};
    [[nodiscard]] bool room() const { return end - o >= 2; }  // a record gives at most two
    [[nodiscard]] bool room2() const { return end - o >= 4; }
    [[gnu::always_inline]] void put(const LackeyRecord& r) {
        // Branch-free: the second store is overwritten unless it counts.
        const std::uint64_t what = ops[static_cast<unsigned char>(r.op)];
        const std::uint64_t a = r.address & ~std::uint64_t{1};
        o[0] = a | (what & 1);
        o += what >> 1 & 1;
        o[0] = a | 1;
        o += what >> 2 & 1;
        ++kinds[what >> 3 & 3];
    }
};

// What RefSink does with a record, by its operation: bit 0, its first
// reference is a write; bit 1, it has a first reference; bit 2, a second (a
// write); bits 3-4, its kind (I, L, S, M).
struct RefOps {
    std::uint64_t at[256];
    constexpr explicit RefOps(bool modify_once) : at{} {
        at[static_cast<unsigned char>('I')] = 0;
        at[static_cast<unsigned char>('L')] = 0b010 | 1 << 3;
        at[static_cast<unsigned char>('S')] = 0b011 | 2 << 3;
        at[static_cast<unsigned char>('M')] = (modify_once ? 0b011 : 0b110) | 3 << 3;
    }
};
constexpr RefOps kRefOps[2] = {RefOps(false), RefOps(true)};

// Parses the lines from p up to limit into `sink`, until it is full.
// limit[-1] is a '\n', and 32 bytes past limit can be read. `line` counts
// the lines parsed. For a bad line, bad(line number, problem, its '\n') is
// called: it throws, or returns true to go on or false to stop before the
// line. Returns where parsing stopped: a line's start, or limit.
template <class Sink, class Bad>
[[gnu::always_inline]] inline const unsigned char* parse_lines(const unsigned char* p, const unsigned char* const limit,
                                                               std::uint64_t& line, Sink& sink, Bad&& bad) {
    // Locals, not the caller's objects: the compiler keeps them in registers
    // (stores through the sink's pointer could otherwise alias them).
    std::uint64_t n = line;
    Sink out = sink;
    while (p < limit && out.room()) {
        LackeyRecord r, r2;
        // Two lines of the commonest shape, whole before limit.
        if (limit - p >= 28 && out.room2() && canonical_pair(p, r, r2)) [[likely]] {
            n += 2;
            out.put(r);
            out.put(r2);
            p += 28;
            continue;
        }
        // limit - 1 is a '\n', so this stops.
        const unsigned char* const nl = next_newline(p);
        if (fast_line(p, static_cast<std::size_t>(nl - p), r)) [[likely]] {
            ++n;
            out.put(r);
            p = nl + 1;
            continue;
        }
        std::string problem;
        const LackeyLine kind = slow_line(p, nl, &r, &problem);
        if (kind == LackeyLine::Bad && !bad(n + 1, problem, nl)) break;
        ++n;
        if (kind == LackeyLine::Record) out.put(r);
        p = nl + 1;
    }
    line = n;
    sink = out;
    return p;
}

}  // namespace

LackeyError::LackeyError(const std::string& source, std::uint64_t line, const std::string& problem)
    : std::runtime_error(line == 0 ? fmt::format("{}: {}", source, problem)
                                   : fmt::format("{}:{}: {}", source, line, problem)),
      line_(line),
      problem_(problem) {}

LackeyError LackeyError::no_records(const std::string& source, std::uint64_t skipped,
                                    const std::string& first_skipped) {
    if (skipped > 0)
        return {source, 0,
                fmt::format("no valid access line ({} malformed line{} skipped; first: {})", skipped,
                            skipped == 1 ? "" : "s", first_skipped)};
    return {source, 0, "empty trace: no I, L, S or M line"};
}

LackeyLine parse_lackey_line(std::string_view line, LackeyRecord& out, std::string* problem) {
    if (line.size() > kLackeyMaxLine) return long_line(line.data(), line.data() + line.size(), problem);
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
            std::string problem;
            ++line_;
            if (long_line(buf, buf + data_end_, &problem) == LackeyLine::Bad) bad_line(line_, problem);
            discarding_long_line_ = true;
            data_end_ = 0;
        }
    }
}

std::size_t LackeyReader::read(std::span<LackeyRecord> out) {
    RecordSink sink{out.data(), out.data() + out.size()};
    while (sink.room()) {
        if (pos_ >= parse_end_ && !refill()) break;
        const auto* base = reinterpret_cast<const unsigned char*>(buffer_.data());
        const unsigned char* p = base + pos_;
        const unsigned char* const limit = base + parse_end_;
        std::uint64_t line = line_;
        p = parse_lines(p, limit, line, sink,
                        [&](std::uint64_t bad, const std::string& problem, const unsigned char* nl) {
                            // Past the bad line first: after a throw, read() goes on from the next one.
                            line_ = bad;
                            pos_ = static_cast<std::size_t>(nl + 1 - base);
                            bad_line(bad, problem);
                            return true;
                        });
        line_ = line;
        pos_ = static_cast<std::size_t>(p - base);
    }
    const auto n = static_cast<std::size_t>(sink.o - out.data());
    records_ += n;
    if (n == 0 && records_ == 0 && eof_) throw LackeyError::no_records(source_, skipped_, first_skipped_);
    return n;
}

LackeyChunks::LackeyChunks(int fd, std::string source, std::uint64_t size, std::size_t chunk_bytes)
    : fd_(fd), source_(std::move(source)), size_(size), chunk_(chunk_bytes) {
    if (chunk_ == 0) throw std::invalid_argument("LackeyChunks: chunk_bytes must be at least 1");
    count_ = static_cast<std::size_t>((size_ + chunk_ - 1) / chunk_);
    // The chunks are parsed where the kernel keeps the file, mapped, not
    // copied out of it: the copy cost about as much as the parse. Where the
    // file cannot be mapped, parse() reads it instead.
    if (size_ > 0) {
        void* m = ::mmap(nullptr, static_cast<std::size_t>(size_), PROT_READ, MAP_PRIVATE, fd_, 0);
        if (m != MAP_FAILED) {
            map_ = static_cast<const unsigned char*>(m);
            ::madvise(m, static_cast<std::size_t>(size_), MADV_SEQUENTIAL);
        }
    }
}

LackeyChunks::~LackeyChunks() {
    if (map_) ::munmap(const_cast<unsigned char*>(map_), static_cast<std::size_t>(size_));
}

void LackeyChunks::release(std::size_t index) {
    if (!map_ || index == 0) return;
    // Chunk index reads from one byte before its start.
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t end = (static_cast<std::uint64_t>(index) * chunk_ - 1) / page * page;
    if (end < released_ + (std::uint64_t{4} << 20))
        return;  // a few MiB at a time: each call costs the other CPU an interrupt
    ::madvise(const_cast<unsigned char*>(map_) + released_, static_cast<std::size_t>(end - released_), MADV_DONTNEED);
    released_ = end;
}

// The byte before the chunk (is a line starting at its first byte?), the
// chunk, kLackeyMaxLine + 1 bytes after it (where its last line may end), a
// '\n' for an unterminated last line, and padding for the parser's reads.
std::size_t LackeyChunks::text_bytes() const {
    return 1 + chunk_ + kLackeyMaxLine + 1 + 1 + kLackeyPadding;
}

// A record's line has at least six bytes ("L 0,1" and its '\n'), so at most
// one record starts in any six bytes of the chunk.
std::size_t LackeyChunks::max_records() const {
    return chunk_ / 6 + 1;
}

LackeyChunks::Parsed LackeyChunks::parse(std::size_t index, std::span<char> text, std::span<LackeyRecord> out,
                                         bool skip_bad) const {
    if (out.size() < max_records()) throw std::logic_error("LackeyChunks::parse: `out` too small");
    RecordSink sink{out.data(), out.data() + out.size()};
    Parsed r = parse_into(index, text, sink, skip_bad);
    r.written = static_cast<std::size_t>(sink.o - out.data());
    r.records = r.written;
    return r;
}

LackeyChunks::Parsed LackeyChunks::parse(std::size_t index, std::span<char> text, std::span<std::uint64_t> refs,
                                         bool modify_once, bool skip_bad) const {
    if (refs.size() < 2 * max_records()) throw std::logic_error("LackeyChunks::parse: `refs` too small");
    RefSink sink{refs.data(), refs.data() + refs.size(), kRefOps[modify_once].at};
    Parsed r = parse_into(index, text, sink, skip_bad);
    r.written = static_cast<std::size_t>(sink.o - refs.data());
    r.kinds = sink.kinds;
    for (const std::uint64_t k : sink.kinds) r.records += k;
    return r;
}

template <class Sink>
LackeyChunks::Parsed LackeyChunks::parse_into(std::size_t index, std::span<char> text, Sink& sink,
                                              bool skip_bad) const {
    if (index >= count_ || text.size() < text_bytes())
        throw std::logic_error("LackeyChunks::parse: bad chunk index, or `text` too small");
    const std::uint64_t begin = static_cast<std::uint64_t>(index) * chunk_;
    const std::uint64_t end = std::min<std::uint64_t>(begin + chunk_, size_);
    const std::uint64_t from = index == 0 ? 0 : begin - 1;
    const std::uint64_t want = std::min<std::uint64_t>(size_, end + kLackeyMaxLine + 1) - from;
    auto* t = reinterpret_cast<unsigned char*>(text.data());
    std::size_t got = 0;
    if (map_ && from + want + kLackeyPadding <= size_) {
        // In the mapping, with the padding the parser reads past the end still in the file.
        t = const_cast<unsigned char*>(map_ + from);
        got = static_cast<std::size_t>(want);
    }
    while (got < want) {
        const ssize_t n = ::pread(fd_, t + got, static_cast<std::size_t>(want - got), static_cast<off_t>(from + got));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(fmt::format("cannot read {}: {}", source_, std::strerror(errno)));
        }
        if (n == 0) break;  // the file shrank: it ends here
        got += static_cast<std::size_t>(n);
    }
    const bool at_eof = got < want || from + got >= size_;
    Parsed r;
    // The first line that starts in the chunk, and where lines must start (before `stop`).
    std::size_t first = 0;
    if (index > 0) {
        const void* nl = std::memchr(t, '\n', got);
        if (!nl) return r;
        first = static_cast<std::size_t>(static_cast<const unsigned char*>(nl) - t) + 1;
    }
    const std::size_t stop = std::min<std::size_t>(static_cast<std::size_t>(end - from), got);
    if (first >= stop) return r;
    // The '\n' that ends the last line starting before `stop`; that line is too
    // long when none is within reach, unless it ends the file.
    std::size_t limit = 0;
    bool long_last = false;
    if (const void* nl = std::memchr(t + stop - 1, '\n', got - (stop - 1))) {
        limit = static_cast<std::size_t>(static_cast<const unsigned char*>(nl) - t) + 1;
    } else if (at_eof) {
        t[got] = '\n';
        limit = got + 1;
    } else {
        const void* before = ::memrchr(t + first, '\n', stop - 1 - first);
        limit = before ? static_cast<std::size_t>(static_cast<const unsigned char*>(before) - t) + 1 : first;
        long_last = true;
    }
    std::uint64_t line = 0;
    bool stopped = false;
    auto bad = [&](std::uint64_t n, const std::string& problem, const unsigned char*) {
        if (r.bad_line == 0) {
            r.bad_line = n;
            r.problem = problem;
        }
        if (!skip_bad) {
            stopped = true;
            return false;
        }
        ++r.skipped;
        return true;
    };
    const unsigned char* const p = parse_lines(t + first, t + limit, line, sink, bad);
    if (!stopped && p != t + limit) throw std::logic_error("LackeyChunks::parse: more records than max_records()");
    if (!stopped && long_last) {
        ++line;
        std::string problem;
        if (long_line(reinterpret_cast<const char*>(t + limit), reinterpret_cast<const char*>(t + got), &problem) ==
            LackeyLine::Bad)
            bad(line, problem, nullptr);
    }
    r.lines = line;
    return r;
}

void lackey_refs(std::span<const LackeyRecord> records, bool modify_once, std::vector<std::uint64_t>& refs,
                 std::array<std::uint64_t, 4>& kinds) {
    const std::size_t at = refs.size();
    refs.resize(at + 2 * records.size());
    RefSink sink{refs.data() + at, refs.data() + refs.size(), kRefOps[modify_once].at};
    for (const LackeyRecord& r : records) sink.put(r);
    refs.resize(static_cast<std::size_t>(sink.o - refs.data()));
    for (std::size_t i = 0; i < 4; ++i) kinds[i] += sink.kinds[i];
}

}  // namespace cachesim
