#include "checkpoint/block_copy.hpp"

#include <cstring>
#include <vector>

namespace trainrt::checkpoint {
namespace {

// Row-major strides in elements.
std::vector<std::uint64_t> strides_of(const Shape& dims) {
    std::vector<std::uint64_t> strides(dims.size(), 1);
    for (std::size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
    return strides;
}

}  // namespace

void copy_block(const char* from, const ArrayBox& from_box, char* to, const ArrayBox& to_box, const Shape& count,
                std::size_t element_size) {
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
        std::memcpy(to + to_at * element_size, from + from_at * element_size, run * element_size);
        std::size_t d = first_run_dim;
        while (d > 0 && ++index[d - 1] == count[d - 1]) index[--d] = 0;
        if (d == 0) return;
    }
}

}  // namespace trainrt::checkpoint
