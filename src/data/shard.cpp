#include "data/shard.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "data/dataset_file.hpp"
#include "data/row_reader.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

std::vector<ColumnInfo> shard_columns(const std::string& path, const std::string& split_name, std::size_t& rows) {
    DatasetInfo info = read_dataset_info(path);
    const SplitInfo& split = info.split(split_name);
    if (info.feature_column.empty() || info.label_column.empty())
        throw DataError(fmt::format("data: {} names no feature or label column (import it with --features and "
                                    "--label) for a whole-shard read; stream its columns with session.dataset()",
                                    path));
    const ColumnInfo& features = find_column(info, split, info.feature_column);
    const ColumnInfo& labels = find_column(info, split, info.label_column);
    if (features.type != ColumnType::u8 || labels.type != ColumnType::u8 || !labels.sample_shape.empty())
        throw DataError(fmt::format("data: {}: split '{}' needs uint8 features ('{}') and a uint8 scalar label ('{}') "
                                    "for a whole-shard read (an image dataset); stream other columns with "
                                    "session.dataset()", path, split_name, info.feature_column, info.label_column));
    rows = split.rows;
    return {features, labels};
}

}  // namespace

void check_split(const std::string& path, const std::string& split) {
    std::size_t rows = 0;
    shard_columns(path, split, rows);
}

DatasetShard read_shard(const ShardRequest& request) {
    std::size_t rows = 0;
    std::vector<ColumnInfo> columns = shard_columns(request.path, request.split, rows);
    DatasetShard shard;
    shard.split = request.split;
    shard.global_count = rows;
    shard.sample_shape = columns[0].sample_shape;
    auto order = epoch_order(rows, request.shuffle, request.seed, request.epoch);
    shard.indices = rank_indices(order, request.rank, request.ranks, shard.padded);
    shard.count = shard.indices.size();

    std::vector<std::uint64_t> unique(shard.indices);
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    const std::size_t sample = shard.sample_size();
    std::vector<std::byte> images(unique.size() * sample), labels(unique.size());
    RowReader reader(request.path, request.split, columns);
    reader.read(0, unique, images.data());
    reader.read(1, unique, labels.data());

    shard.features.resize(shard.count * sample);
    shard.labels.resize(shard.count);
    for (std::size_t i = 0; i < shard.count; ++i) {
        const auto at = static_cast<std::size_t>(std::lower_bound(unique.begin(), unique.end(), shard.indices[i]) -
                                                 unique.begin());
        std::memcpy(shard.features.data() + i * sample, images.data() + at * sample, sample);
        shard.labels[i] = static_cast<std::uint8_t>(labels[at]);
    }
    return shard;
}

}  // namespace trainrt::data

namespace trainrt {

std::size_t DatasetShard::sample_size() const {
    return std::accumulate(sample_shape.begin(), sample_shape.end(), std::size_t{1}, std::multiplies<>());
}

}  // namespace trainrt
