#include "data/shard.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "data/schema.hpp"
#include "h5/h5.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {

std::size_t trainrt_sample_size(const std::vector<std::size_t>& shape) {
    return std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
}

std::vector<std::uint64_t> epoch_order(std::uint64_t count, bool shuffle, std::uint64_t seed,
                                       std::uint64_t epoch) {
    std::vector<std::uint64_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    if (!shuffle) return order;
    // mt19937_64's sequence is fixed by the C++ standard, and this Fisher-Yates uses no
    // implementation-defined distribution: every rank and every build draws the same order.
    std::mt19937_64 engine(seed * 0x9E3779B97F4A7C15ull + epoch + 1);
    for (std::uint64_t i = count; i > 1; --i) std::swap(order[i - 1], order[engine() % i]);
    return order;
}

std::vector<std::uint64_t> rank_indices(const std::vector<std::uint64_t>& order, int rank,
                                        int ranks, std::size_t& padded) {
    const std::size_t per_rank = (order.size() + ranks - 1) / ranks;
    std::vector<std::uint64_t> mine;
    mine.reserve(per_rank);
    padded = 0;
    for (std::size_t k = 0; k < per_rank; ++k) {
        std::size_t position = k * ranks + rank;
        if (position >= order.size()) ++padded;
        mine.push_back(order[position % order.size()]);
    }
    return mine;
}

namespace {

struct SplitFile {
    h5::File file;
    h5::Dataset images;
    h5::Dataset labels;
    std::vector<hsize_t> image_shape;
};

SplitFile open_split(const ShardRequest& request) {
    if (!std::filesystem::exists(request.path))
        throw DataError(fmt::format("data: dataset file {} does not exist; create it with "
                                    "`trainrt data import fashion-mnist --out {}`",
                                    request.path, request.path));
    SplitFile split;
    try {
        split.file = h5::open_file(request.path, false);
        std::string format = h5::read_string_attribute(split.file.get(), "format");
        if (format != kDatasetFormat) throw DataError("format attribute is '" + format + "'");
        split.images = h5::open_dataset(split.file.get(), request.split + "/images");
        split.labels = h5::open_dataset(split.file.get(), request.split + "/labels");
    } catch (const Error& error) {
        throw DataError(fmt::format("data: {} is not a trainrt dataset with a '{}' split ({}); "
                                    "re-create it with `trainrt data import`",
                                    request.path, request.split, error.what()));
    }
    split.image_shape = h5::dataset_shape(split.images.get());
    std::vector<hsize_t> label_shape = h5::dataset_shape(split.labels.get());
    if (split.image_shape.empty() || label_shape.size() != 1 ||
        label_shape[0] != split.image_shape[0])
        throw DataError(fmt::format("data: {}: /{}/images and /{}/labels disagree in length",
                                    request.path, request.split, request.split));
    return split;
}

bool is_strided(const std::vector<std::uint64_t>& rows, std::uint64_t& stride) {
    stride = rows.size() > 1 ? rows[1] - rows[0] : 1;
    if (stride == 0 && rows.size() > 1) return false;
    for (std::size_t i = 1; i < rows.size(); ++i)
        if (rows[i] != rows[i - 1] + stride) return false;
    return true;
}

// Selects `rows` (sorted, unique) of a dataset whose first dimension is the sample.
void select_rows(hid_t space, const std::vector<std::uint64_t>& rows,
                 const std::vector<hsize_t>& shape) {
    std::vector<hsize_t> start(shape.size(), 0), count(shape), stride(shape.size(), 1);
    std::uint64_t step = 1;
    if (is_strided(rows, step)) {
        start[0] = rows.empty() ? 0 : rows[0];
        stride[0] = step;
        count[0] = rows.size();
        TRAINRT_H5(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), stride.data(),
                                       count.data(), nullptr), "strided rows");
        return;
    }
    TRAINRT_H5(H5Sselect_none(space), "");
    count[0] = 1;
    for (std::uint64_t row : rows) {
        start[0] = row;
        TRAINRT_H5(H5Sselect_hyperslab(space, H5S_SELECT_OR, start.data(), nullptr,
                                       count.data(), nullptr), "row");
    }
}

// Reads `rows` (sorted, unique) into `out`, row after row.
void read_rows(hid_t dataset, const std::vector<std::uint64_t>& rows,
               const std::vector<hsize_t>& shape, std::uint8_t* out) {
    h5::Dataspace file_space = h5::dataset_space(dataset);
    select_rows(file_space.get(), rows, shape);
    std::vector<hsize_t> memory_shape(shape);
    memory_shape[0] = rows.size();
    h5::Dataspace memory_space(
        TRAINRT_H5(H5Screate_simple(static_cast<int>(memory_shape.size()), memory_shape.data(),
                                    nullptr), ""));
    TRAINRT_H5(H5Dread(dataset, H5T_NATIVE_UINT8, memory_space.get(), file_space.get(),
                       H5P_DEFAULT, out), "rows");
}

}  // namespace

void check_split(const std::string& path, const std::string& split) {
    ShardRequest request;
    request.path = path;
    request.split = split;
    open_split(request);
}

DatasetShard read_shard(const ShardRequest& request) {
    SplitFile split = open_split(request);
    DatasetShard shard;
    shard.split = request.split;
    shard.global_count = split.image_shape[0];
    shard.sample_shape.assign(split.image_shape.begin() + 1, split.image_shape.end());
    auto order = epoch_order(shard.global_count, request.shuffle, request.seed, request.epoch);
    shard.indices = rank_indices(order, request.rank, request.ranks, shard.padded);
    shard.count = shard.indices.size();

    std::vector<std::uint64_t> rows(shard.indices);
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    const std::size_t sample = shard.sample_size();
    std::vector<std::uint8_t> row_images(rows.size() * sample), row_labels(rows.size());
    read_rows(split.images.get(), rows, split.image_shape, row_images.data());
    read_rows(split.labels.get(), rows, {split.image_shape[0]}, row_labels.data());

    shard.features.resize(shard.count * sample);
    shard.labels.resize(shard.count);
    for (std::size_t i = 0; i < shard.count; ++i) {
        std::size_t at = std::lower_bound(rows.begin(), rows.end(), shard.indices[i]) - rows.begin();
        std::copy_n(row_images.data() + at * sample, sample, shard.features.data() + i * sample);
        shard.labels[i] = row_labels[at];
    }
    return shard;
}

}  // namespace trainrt::data

namespace trainrt {

std::size_t DatasetShard::sample_size() const { return data::trainrt_sample_size(sample_shape); }

}  // namespace trainrt
