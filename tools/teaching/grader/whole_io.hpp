#pragma once
// Reading and writing a pipe whole: a read or write may move fewer bytes than asked, so both loop
// until all have moved, or the other end is gone (false). The judge and the speed probe's timer
// talk to the submission's processes so.
#include <unistd.h>

#include <cstddef>

namespace whole_io {

inline bool write_all(int fd, const void* data, std::size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t done = ::write(fd, p, n);
        if (done <= 0) return false;
        p += done;
        n -= static_cast<std::size_t>(done);
    }
    return true;
}

inline bool read_all(int fd, void* data, std::size_t n) {
    char* p = static_cast<char*>(data);
    while (n > 0) {
        const ssize_t got = ::read(fd, p, n);
        if (got <= 0) return false;
        p += got;
        n -= static_cast<std::size_t>(got);
    }
    return true;
}

}  // namespace whole_io
