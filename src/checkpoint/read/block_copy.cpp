#include "checkpoint/read/block_copy.hpp"

#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

namespace trainrt::checkpoint {
namespace {

// Row-major strides in elements.
std::vector<std::uint64_t> strides_of(const Shape& dims) {
    std::vector<std::uint64_t> strides(dims.size(), 1);
    for (std::size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
    return strides;
}

// memcpy of `bytes` by up to `threads` threads, slices of at least kParallelCopyBytes / 2. Where a
// thread cannot be started, the calling thread copies that slice.
void copy_bytes(char* to, const char* from, std::size_t bytes, int threads) {
    const std::size_t most = std::max<std::size_t>(1, bytes / (kParallelCopyBytes / 2));
    const std::size_t slices = std::min<std::size_t>(std::max(threads, 1), most);
    if (slices == 1) {
        std::memcpy(to, from, bytes);
        return;
    }
    const std::size_t slice = (bytes / slices + 4095) / 4096 * 4096;
    std::vector<std::thread> helpers;
    helpers.reserve(slices - 1);
    for (std::size_t at = slice; at < bytes; at += slice) {
        const std::size_t n = std::min(slice, bytes - at);
        try {
            helpers.emplace_back([=] { std::memcpy(to + at, from + at, n); });
        } catch (const std::system_error&) {
            std::memcpy(to + at, from + at, n);
        }
    }
    std::memcpy(to, from, std::min(slice, bytes));
    for (std::thread& helper : helpers) helper.join();
}

}  // namespace

void copy_block(const char* from, const ArrayBox& from_box, char* to, const ArrayBox& to_box, const Shape& count,
                std::size_t element_size, int threads) {
    const std::size_t rank = count.size();
    for (std::uint64_t n : count)
        if (n == 0) return;
    // The contiguous run: the last dimension, and the ones before it while all after are whole.
    std::size_t first_run_dim = rank;
    std::uint64_t run = 1;
    while (first_run_dim > 0) {
        const std::size_t d = first_run_dim - 1;
        run *= count[d];
        first_run_dim = d;
        const bool whole = count[d] == (*from_box.dims)[d] && count[d] == (*to_box.dims)[d];
        if (!whole) break;
    }
    const std::vector<std::uint64_t> from_strides = strides_of(*from_box.dims), to_strides = strides_of(*to_box.dims);
    std::vector<std::uint64_t> index(first_run_dim, 0);  // over the dimensions before the run
    for (;;) {
        std::uint64_t from_at = 0, to_at = 0;
        for (std::size_t d = 0; d < rank; ++d) {
            const std::uint64_t i = d < first_run_dim ? index[d] : 0;
            from_at += ((*from_box.start)[d] + i) * from_strides[d];
            to_at += ((*to_box.start)[d] + i) * to_strides[d];
        }
        copy_bytes(to + to_at * element_size, from + from_at * element_size, run * element_size, threads);
        std::size_t d = first_run_dim;
        while (d > 0 && ++index[d - 1] == count[d - 1]) index[--d] = 0;
        if (d == 0) return;
    }
}

}  // namespace trainrt::checkpoint
