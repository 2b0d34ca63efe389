#pragma once
// The judge: the grader's cases run in this process, and every call of an exercise function runs
// in a child process. The child loads the submission (a shared library; its static objects are
// built there, never here), calls the function on the arguments it inherited, and sends back the
// result and the arrays the function wrote; this process compares them with the book's answers.
// Nothing the submission does can reach this process's memory or its output: it runs only in the
// child, which holds no descriptor but the result's pipe and its own output file.
//
// judge_proxy.cpp (written by tools/teaching/handout.py from exercise.hpp) defines each exercise
// function as a call of judge::Call<...>::run; the submission's library exports the functions'
// addresses in the same order (judge_exports.cpp). A non-const pointer argument is an array the
// function writes: the start of a heap block (a std::vector's data()), copied back whole.
#include <malloc.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace judge {

/// Judge mode: calls load `library` in a child whose output goes to `output` (a file); this
/// process becomes one that the submission's children cannot trace or read.
/// From then on stdout is stderr, and the results go to the original stdout (send_results).
void start(const std::string& library, const std::string& output);
void send_results(const std::string& text);

/// What the child sends: bytes appended, and read back with every length checked.
struct Writer {
    std::string bytes;
    void raw(const void* p, std::size_t n) { bytes.append(static_cast<const char*>(p), n); }
};
struct Reader {
    const std::string& bytes;
    std::size_t at = 0;
    void raw(void* p, std::size_t n) {
        if (n > bytes.size() - at) throw std::runtime_error("the submission's answer was cut short");
        std::memcpy(p, bytes.data() + at, n);
        at += n;
    }
    std::uint64_t count() {
        std::uint64_t n = 0;
        raw(&n, sizeof n);
        if (n > bytes.size() - at) throw std::runtime_error("the submission's answer was cut short");
        return n;
    }
};

template <class T>
struct Wire {  // a trivially copyable value: its bytes
    static_assert(std::is_trivially_copyable_v<T>, "judge: no wire format for this result type");
    static void put(Writer& w, const T& v) { w.raw(&v, sizeof v); }
    static T get(Reader& r) {
        T v;
        r.raw(&v, sizeof v);
        return v;
    }
};
template <class A, class B>
struct Wire<std::pair<A, B>> {
    static void put(Writer& w, const std::pair<A, B>& v) {
        Wire<A>::put(w, v.first);
        Wire<B>::put(w, v.second);
    }
    static std::pair<A, B> get(Reader& r) {
        A a = Wire<A>::get(r);
        return {a, Wire<B>::get(r)};
    }
};
template <class T>
struct Wire<std::vector<T>> {
    static void put(Writer& w, const std::vector<T>& v) {
        const std::uint64_t n = v.size();
        w.raw(&n, sizeof n);
        for (const auto& x : v) Wire<T>::put(w, x);
    }
    static std::vector<T> get(Reader& r) {
        std::vector<T> v(r.count());
        for (auto& x : v) x = Wire<T>::get(r);
        return v;
    }
};
template <>
struct Wire<std::string> {
    static void put(Writer& w, const std::string& s) {
        const std::uint64_t n = s.size();
        w.raw(&n, sizeof n);
        w.raw(s.data(), s.size());
    }
    static std::string get(Reader& r) {
        std::string s(r.count(), '\0');
        r.raw(s.data(), s.size());
        return s;
    }
};
template <class T>
struct Wire<std::optional<T>> {
    static void put(Writer& w, const std::optional<T>& v) {
        Wire<bool>::put(w, v.has_value());
        if (v) Wire<T>::put(w, *v);
    }
    static std::optional<T> get(Reader& r) {
        if (!Wire<bool>::get(r)) return std::nullopt;
        return Wire<T>::get(r);
    }
};

/// The arrays a call writes: each non-const pointer argument's heap block.
template <class P>
void note_array(std::vector<std::pair<void*, std::size_t>>& arrays, P arg) {
    using Bare = std::remove_reference_t<P>;
    if constexpr (std::is_pointer_v<Bare> && !std::is_const_v<std::remove_pointer_t<Bare>>)
        if (arg != nullptr) arrays.emplace_back(static_cast<void*>(arg), malloc_usable_size(static_cast<void*>(arg)));
}

/// Runs `call` in a child whose answer arrives as bytes: "v" and the answer, or "x" and the
/// exception's text; throws, naming `name`, when the child ends without one.
std::string in_child(const char* name, std::size_t index, void (*call)(const void* function, Writer&, void* context),
                     void* context);

template <class F>
struct Call;
template <class R, class... P>
struct Call<R (*)(P...)> {
    using Function = R (*)(P...);
    struct Context {
        std::tuple<P...> args;
        std::vector<std::pair<void*, std::size_t>> arrays;
    };
    static void in_submission(const void* function, Writer& w, void* raw) {
        auto& c = *static_cast<Context*>(raw);
        const auto f = reinterpret_cast<Function>(const_cast<void*>(function));
        if constexpr (std::is_void_v<R>)
            std::apply(f, c.args);
        else
            Wire<std::decay_t<R>>::put(w, std::apply(f, c.args));
        for (const auto& [p, n] : c.arrays) w.raw(p, n);
    }
    static R run(const char* name, std::size_t index, P... args) {
        Context c{std::tuple<P...>(std::forward<P>(args)...), {}};
        std::apply([&](auto&&... a) { (note_array(c.arrays, a), ...); }, c.args);
        const std::string bytes = in_child(name, index, &in_submission, &c);
        Reader r{bytes};
        if constexpr (std::is_void_v<R>) {
            read_arrays(r, c.arrays);
        } else {
            R result = Wire<std::decay_t<R>>::get(r);
            read_arrays(r, c.arrays);
            return result;
        }
    }
    static void read_arrays(Reader& r, const std::vector<std::pair<void*, std::size_t>>& arrays) {
        for (const auto& [p, n] : arrays) r.raw(p, n);
        if (r.at != r.bytes.size()) throw std::runtime_error("the submission's answer has extra bytes");
    }
};

}  // namespace judge
