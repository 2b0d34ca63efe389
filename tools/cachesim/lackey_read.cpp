// read_lackey() and read_lackey_refs(): a whole trace, parsed on one or two
// threads, handed over in order on the calling thread.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "lackey.hpp"

namespace cachesim {
namespace {

// The trace's descriptor: an opened file, or standard input (not closed).
struct Input {
    int fd = 0;
    bool owned = false;
    std::string source = "<stdin>";
    explicit Input(const std::string& path) {
        if (path == "-") return;
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw std::runtime_error(fmt::format("cannot open trace {}: {}", path, std::strerror(errno)));
        owned = true;
        source = path;
    }
    ~Input() {
        if (owned) ::close(fd);
    }
    Input(const Input&) = delete;
    Input& operator=(const Input&) = delete;
};

// Room for n values, not written until used: LackeyRecord has default member
// initializers, so a vector (or new[]) would first write every one of them.
template <class T>
class Block {
public:
    explicit Block(std::size_t n) : block_(std::malloc(n * sizeof(T)), &std::free), size_(n) {
        if (!block_) throw std::bad_alloc();
    }
    // T is an aggregate: each one is written whole before it is read.
    [[nodiscard]] T* data() const { return static_cast<T*>(block_.get()); }
    [[nodiscard]] std::span<T> span() const { return {data(), size_}; }

private:
    std::unique_ptr<void, decltype(&std::free)> block_;
    std::size_t size_;
};

// Records handed over as they are.
struct Records {
    using Value = LackeyRecord;
    const std::function<void(std::span<const LackeyRecord>)>& consume;
    [[nodiscard]] static std::size_t per_chunk(const LackeyChunks& c) { return c.max_records(); }
    LackeyChunks::Parsed parse(const LackeyChunks& c, std::size_t i, std::span<char> text, std::span<Value> out,
                               bool skip_bad) const {
        return c.parse(i, text, out, skip_bad);
    }
    void hand_over(std::span<const LackeyRecord> records, LackeyTotals&) { consume(records); }
};

// Records handed over as references (read_lackey_refs()).
struct Refs {
    using Value = std::uint64_t;
    const std::function<void(std::span<const std::uint64_t>)>& consume;
    bool modify_once;
    std::vector<std::uint64_t> scratch = {};
    [[nodiscard]] static std::size_t per_chunk(const LackeyChunks& c) { return 2 * c.max_records(); }
    LackeyChunks::Parsed parse(const LackeyChunks& c, std::size_t i, std::span<char> text, std::span<Value> out,
                               bool skip_bad) const {
        return c.parse(i, text, out, modify_once, skip_bad);
    }
    void hand_over(std::span<const LackeyRecord> records, LackeyTotals& totals) {
        scratch.clear();
        lackey_refs(records, modify_once, scratch, totals.kinds);
        if (!scratch.empty()) consume(scratch);
    }
};

// Stops and joins a helper thread however the calling thread leaves.
struct Joiner {
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& stop;
    std::thread& thread;
    ~Joiner() {
        {
            std::lock_guard lock(mutex);
            stop = true;
        }
        changed.notify_all();
        thread.join();
    }
};

void add_reader_totals(const LackeyReader& reader, LackeyTotals& totals) {
    totals.lines = reader.lines();
    totals.records = reader.records();
    totals.skipped = reader.skipped();
    totals.first_skipped = reader.first_skipped();
}

// One thread: read, parse and hand over in turn.
template <class Out>
LackeyTotals read_alone(LackeyReader& reader, Out& out) {
    const Block<LackeyRecord> block(1 << 14);
    LackeyTotals totals;
    for (std::size_t n; (n = reader.read(block.span())) > 0;) out.hand_over({block.data(), n}, totals);
    add_reader_totals(reader, totals);
    return totals;
}

// A pipe: a second thread reads and parses a few batches ahead of this one.
// Each hand-over (a wake-up when the other thread waits) comes once per
// kBatch records.
template <class Out>
LackeyTotals read_piped(LackeyReader& reader, Out& out) {
    constexpr std::size_t kBatch = 1 << 14, kSlots = 4;
    const Block<LackeyRecord> block(kBatch * kSlots);
    std::array<std::size_t, kSlots> filled{};
    std::mutex mutex;
    std::condition_variable changed;
    std::size_t produced = 0, consumed = 0;  // batches
    bool done = false, stop = false;
    std::exception_ptr error;
    std::thread producer([&] {
        try {
            for (;;) {
                {
                    std::unique_lock lock(mutex);
                    changed.wait(lock, [&] { return produced - consumed < kSlots || stop; });
                    if (stop) return;
                }
                const std::size_t slot = produced % kSlots;
                const std::size_t n = reader.read(block.span().subspan(slot * kBatch, kBatch));
                {
                    std::lock_guard lock(mutex);
                    filled[slot] = n;
                    if (n == 0)
                        done = true;
                    else
                        ++produced;
                }
                changed.notify_all();
                if (n == 0) return;
            }
        } catch (...) {
            std::lock_guard lock(mutex);
            error = std::current_exception();
            done = true;
            changed.notify_all();
        }
    });
    const Joiner joiner{mutex, changed, stop, producer};
    LackeyTotals totals;
    for (;;) {
        std::size_t slot = 0, n = 0;
        {
            std::unique_lock lock(mutex);
            changed.wait(lock, [&] { return consumed < produced || done; });
            if (consumed == produced) {  // the end, or an error
                if (error) std::rethrow_exception(error);
                break;
            }
            slot = consumed % kSlots;
            n = filled[slot];
        }
        out.hand_over({block.data() + slot * kBatch, n}, totals);
        {
            std::lock_guard lock(mutex);
            ++consumed;
        }
        changed.notify_all();
    }
    add_reader_totals(reader, totals);
    return totals;
}

// A regular file: both threads (or this one alone) parse chunks, each taking
// the next one not yet taken; this thread also hands them over in order. When
// the chunk it needs next is still being parsed, it parses a later one
// meanwhile, so neither thread waits while there is work.
template <class Out>
LackeyTotals read_chunked(LackeyChunks& chunks, bool skip_bad, bool two_threads, Out& out) {
    constexpr std::size_t kSlots = 4;
    struct Slot {
        std::vector<char> text;
        Block<typename Out::Value> values;
        LackeyChunks::Parsed parsed;
        std::exception_ptr error;
        bool ready = false;
    };
    std::vector<Slot> slots;
    slots.reserve(kSlots);
    for (std::size_t i = 0; i < std::min(kSlots, chunks.count()); ++i)
        slots.push_back({std::vector<char>(chunks.text_bytes()),
                         Block<typename Out::Value>(Out::per_chunk(chunks)),
                         {},
                         {},
                         false});
    std::mutex mutex;
    std::condition_variable changed;
    std::size_t taken = 0, consumed = 0;  // chunks
    bool stop = false;
    // Chunk c fills slot c % kSlots once chunk c - kSlots is handed over.
    auto can_take = [&] { return taken < chunks.count() && taken < consumed + kSlots; };
    auto parse = [&](std::size_t c) {
        Slot& s = slots[c % kSlots];
        try {
            s.parsed = out.parse(chunks, c, s.text, s.values.span(), skip_bad);
        } catch (...) {
            s.error = std::current_exception();
        }
        {
            std::lock_guard lock(mutex);
            s.ready = true;
        }
        changed.notify_all();
    };
    std::thread helper([&] {
        if (!two_threads) return;
        for (;;) {
            std::size_t c = 0;
            {
                std::unique_lock lock(mutex);
                changed.wait(lock, [&] { return stop || can_take() || taken >= chunks.count(); });
                if (stop || !can_take()) return;
                c = taken++;
            }
            parse(c);
        }
    });
    const Joiner joiner{mutex, changed, stop, helper};

    LackeyTotals totals;
    for (std::size_t c = 0; c < chunks.count(); ++c) {
        Slot& s = slots[c % kSlots];
        for (;;) {
            std::unique_lock lock(mutex);
            if (s.ready) break;
            if (can_take()) {
                const std::size_t mine = taken++;
                lock.unlock();
                parse(mine);
                continue;
            }
            changed.wait(lock, [&] { return s.ready || can_take(); });
        }
        if (s.error) std::rethrow_exception(s.error);
        const LackeyChunks::Parsed& r = s.parsed;
        if (r.bad_line != 0) {
            if (!skip_bad) throw LackeyError(chunks.source(), totals.lines + r.bad_line, r.problem);
            if (totals.skipped == 0)
                totals.first_skipped = fmt::format("line {}: {}", totals.lines + r.bad_line, r.problem);
            totals.skipped += r.skipped;
        }
        if (r.written > 0) out.consume({s.values.data(), r.written});
        totals.lines += r.lines;
        totals.records += r.records;
        for (std::size_t k = 0; k < 4; ++k) totals.kinds[k] += r.kinds[k];
        {
            std::lock_guard lock(mutex);
            s.ready = false;
            consumed = c + 1;
        }
        changed.notify_all();
        chunks.release(c + 1);
    }
    if (totals.records == 0) throw LackeyError::no_records(chunks.source(), totals.skipped, totals.first_skipped);
    return totals;
}

template <class Out>
LackeyTotals read_any(const std::string& path, bool skip_bad, unsigned threads, Out& out, std::size_t chunk_bytes) {
    const Input input(path);
    struct stat st {};
    // Chunks are read at their own offsets: only a whole regular file, read from its start.
    if (::fstat(input.fd, &st) == 0 && S_ISREG(st.st_mode) && ::lseek(input.fd, 0, SEEK_CUR) == 0) {
        LackeyChunks chunks(input.fd, input.source, static_cast<std::uint64_t>(st.st_size), chunk_bytes);
        return read_chunked(chunks, skip_bad, threads >= 2, out);
    }
    LackeyReader reader(input.fd, input.source, skip_bad);
    return threads >= 2 ? read_piped(reader, out) : read_alone(reader, out);
}

}  // namespace

LackeyTotals read_lackey(const std::string& path, bool skip_bad, unsigned threads,
                         const std::function<void(std::span<const LackeyRecord>)>& consume, std::size_t chunk_bytes) {
    Records out{consume};
    return read_any(path, skip_bad, threads, out, chunk_bytes);
}

LackeyTotals read_lackey_refs(const std::string& path, bool skip_bad, unsigned threads, bool modify_once,
                              const std::function<void(std::span<const std::uint64_t>)>& consume,
                              std::size_t chunk_bytes) {
    Refs out{consume, modify_once};
    return read_any(path, skip_bad, threads, out, chunk_bytes);
}

}  // namespace cachesim
