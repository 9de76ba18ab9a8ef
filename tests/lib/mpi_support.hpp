#pragma once
// What the MPI test programs share (tests/mpi/*.cpp under Catch2, tests/reshard/reshard_check):
// this rank and the world, a directory every rank sees, and tensors whose every element is a
// function of (tensor id, global index, seed), so that any block read back can be checked
// without keeping the writer's buffers. Header-only, no Catch2.
#include <mpi.h>
#include <stdlib.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "checkpoint/format/validate.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/context.hpp"

namespace trainrt::testing {

inline int world_rank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

inline int world_size() {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

inline void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

inline Context world_context(const std::string& run_dir = "") {
    Context context;
    context.world_rank = world_rank();
    context.world_size = world_size();
    context.run_dir = run_dir;
    return context;
}

// A fresh directory every rank sees: rank 0 creates it ($TMPDIR or /tmp, `prefix`-XXXXXX) and
// broadcasts its name; rank 0 removes it once every rank is done with it. Collective.
class SharedDir {
public:
    explicit SharedDir(const std::string& prefix = "trainrt-test") {
        std::array<char, 4096> name{};
        if (world_rank() == 0) {
            const char* base = std::getenv("TMPDIR");
            std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
            if (::mkdtemp(pattern.data()) != nullptr) pattern.copy(name.data(), name.size() - 1);
        }
        MPI_Bcast(name.data(), static_cast<int>(name.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
        path_ = name.data();
        if (path_.empty()) throw std::runtime_error("SharedDir: mkdtemp failed on rank 0");
        barrier();
    }
    ~SharedDir() {
        barrier();
        std::error_code ignored;
        if (world_rank() == 0) std::filesystem::remove_all(path_, ignored);
    }
    SharedDir(const SharedDir&) = delete;
    SharedDir& operator=(const SharedDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// Element `flat` of tensor `id` under `seed`: exactly representable in every type it is stored
// as (f32 up to 2^22 in quarter steps).
template <class T> T value_at(int id, std::uint64_t flat, std::int64_t seed) {
    const auto i = static_cast<std::int64_t>(flat);
    if constexpr (std::is_same_v<T, std::uint8_t>)
        return static_cast<std::uint8_t>((id * 31 + i * 7 + seed * 13) % 251);
    else if constexpr (std::is_same_v<T, std::int32_t>)
        return static_cast<std::int32_t>(-(id * 100000 + seed * 1000 + i));
    else if constexpr (std::is_same_v<T, std::int64_t>)
        return ((std::int64_t{id + 1} << 40) + seed * 1000 + i) * (i % 2 ? -1 : 1);
    else
        return static_cast<T>(0.25 * static_cast<double>(id * 10000 + seed * 1000 + i) - 3.0);
}

// The block [offset, offset + shape) of tensor `id` with global shape `global`, row-major.
template <class T>
std::vector<T> expected_block(int id, std::int64_t seed, const Shape& global, const Shape& offset, const Shape& shape) {
    const std::size_t dims = global.size();
    const std::uint64_t total = checkpoint::element_count(shape);
    std::vector<T> values;
    values.reserve(total);
    std::vector<std::uint64_t> index(dims, 0);
    for (std::uint64_t i = 0; i < total; ++i) {
        std::uint64_t flat = 0;
        for (std::size_t d = 0; d < dims; ++d) flat = flat * global[d] + offset[d] + index[d];
        values.push_back(value_at<T>(id, flat, seed));
        for (std::size_t d = dims; d-- > 0;) {
            if (++index[d] < shape[d]) break;
            index[d] = 0;
        }
    }
    return values;
}

// Calls f(T{}) with the C++ type of `type`.
template <class F> void with_type(TensorType type, F&& f) {
    switch (type) {
        case TensorType::f32: f(float{}); break;
        case TensorType::f64: f(double{}); break;
        case TensorType::i32: f(std::int32_t{}); break;
        case TensorType::i64: f(std::int64_t{}); break;
        case TensorType::u8: f(std::uint8_t{}); break;
    }
}

}  // namespace trainrt::testing
