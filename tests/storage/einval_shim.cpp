// Fault injection for storage's O_DIRECT fallbacks (ctest storage.einval): preloaded into the
// test (LD_PRELOAD), every pread and pwrite on a descriptor opened with O_DIRECT fails with EINVAL,
// as on a filesystem that opens files with O_DIRECT but refuses the transfers (an alignment it does
// not take). Other descriptors go to the C library. trainrt_test_einval_count counts the refusals,
// so that the test can require that they happened (it fails when run without this library).
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

extern "C" {
std::atomic<long> trainrt_test_einval_count{0};
}

namespace {

bool refused(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || (flags & O_DIRECT) == 0) return false;
    ++trainrt_test_einval_count;
    errno = EINVAL;
    return true;
}

template <typename Function>
Function next(const char* name) {
    return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

ssize_t pwrite(int fd, const void* data, size_t length, off_t offset) {
    static const auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
    return refused(fd) ? -1 : real(fd, data, length, offset);
}

ssize_t pwrite64(int fd, const void* data, size_t length, off64_t offset) {
    static const auto real = next<ssize_t (*)(int, const void*, size_t, off64_t)>("pwrite64");
    return refused(fd) ? -1 : real(fd, data, length, offset);
}

ssize_t pread(int fd, void* data, size_t length, off_t offset) {
    static const auto real = next<ssize_t (*)(int, void*, size_t, off_t)>("pread");
    return refused(fd) ? -1 : real(fd, data, length, offset);
}

ssize_t pread64(int fd, void* data, size_t length, off64_t offset) {
    static const auto real = next<ssize_t (*)(int, void*, size_t, off64_t)>("pread64");
    return refused(fd) ? -1 : real(fd, data, length, offset);
}

}  // extern "C"
