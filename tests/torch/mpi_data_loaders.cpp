// trainrt::torch::DistributedSampler under mpiexec (every rank's indices gathered with plain MPI)
// and ShardLoader on a hand-made shard.
#include <torch/torch.h>
#undef CHECK  // glog's CHECK would replace Catch2's (see test_process_group.cpp)

#include <catch2/catch.hpp>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "data/dataset_writer.hpp"
#include "data/stream.hpp"
#include "trainrt/error.hpp"
#include "trainrt/torch.hpp"

using namespace trainrt;

namespace {

int rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}
int size() {
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

std::vector<std::int64_t> drain(trainrt::torch::DistributedSampler& sampler, std::size_t batch) {
    std::vector<std::int64_t> all;
    while (auto indices = sampler.next(batch)) all.insert(all.end(), indices->begin(), indices->end());
    return all;
}

// The epoch's global order as the ranks see it: position k*n + r is rank r's k-th index.
std::vector<std::int64_t> interleaved(const std::vector<std::int64_t>& mine) {
    std::vector<std::int64_t> gathered(mine.size() * size());
    MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, gathered.data(),
                  static_cast<int>(mine.size()), MPI_INT64_T, MPI_COMM_WORLD);
    std::vector<std::int64_t> order(gathered.size());
    for (int r = 0; r < size(); ++r)
        for (std::size_t k = 0; k < mine.size(); ++k) order[k * size() + r] = gathered[r * mine.size() + k];
    return order;
}

}  // namespace

TEST_CASE("DistributedSampler: equal counts, a permutation from (seed, epoch) alike for every world size") {
    const std::size_t samples = 103;  // divides by neither 2 nor 4: padding
    trainrt::torch::DistributedSampler sampler(samples, rank(), size(), /*shuffle=*/true, /*seed=*/7);
    trainrt::torch::DistributedSampler alone(samples, 0, 1, true, 7);
    for (std::uint64_t epoch : {0, 1}) {
        sampler.set_epoch(epoch);
        alone.set_epoch(epoch);
        const auto mine = drain(sampler, 10);
        REQUIRE(mine.size() == (samples + size() - 1) / size());
        REQUIRE(mine.size() == sampler.size());
        const auto order = interleaved(mine);
        const auto one_rank = drain(alone, 64);
        for (std::size_t i = 0; i < order.size(); ++i) REQUIRE(order[i] == one_rank[i % samples]);
        std::vector<std::int64_t> sorted(one_rank);
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t i = 0; i < samples; ++i) REQUIRE(sorted[i] == static_cast<std::int64_t>(i));
    }
    sampler.set_epoch(0);
    const auto epoch0 = drain(sampler, 10);
    sampler.set_epoch(1);
    CHECK(drain(sampler, 10) != epoch0);
    trainrt::torch::DistributedSampler other_seed(samples, rank(), size(), true, 8);
    CHECK(drain(other_seed, 10) != epoch0);
}

TEST_CASE("DistributedSampler: start_at and save/load resume with the next unseen index") {
    trainrt::torch::DistributedSampler sampler(50, rank(), size(), true, 3);
    sampler.set_epoch(2);
    const auto whole = drain(sampler, 4);
    sampler.reset();
    sampler.next(4), sampler.next(4);
    ::torch::serialize::OutputArchive out;
    sampler.save(out);
    std::stringstream bytes;
    out.save_to(bytes);

    trainrt::torch::DistributedSampler resumed(50, rank(), size(), true, 3);
    ::torch::serialize::InputArchive in;
    in.load_from(bytes);
    resumed.load(in);
    resumed.reset();  // what a data loader does when its epoch begins
    const auto rest = drain(resumed, 4);
    REQUIRE(rest == std::vector<std::int64_t>(whole.begin() + 8, whole.end()));
    resumed.reset();
    CHECK(drain(resumed, 4) == whole);  // a resume position serves one epoch
    CHECK_THROWS_AS(resumed.start_at(whole.size() + 1), DataError);
}

TEST_CASE("DistributedSampler drives LibTorch's own data loader") {
    const std::int64_t samples = 40;
    auto dataset = ::torch::data::datasets::TensorDataset(at::arange(samples, at::kFloat).unsqueeze(1));
    trainrt::torch::DistributedSampler sampler(samples, rank(), size(), false, 0);
    auto loader = ::torch::data::make_data_loader(dataset, sampler, ::torch::data::DataLoaderOptions(3));
    std::vector<std::int64_t> seen;
    for (auto& batch : *loader)
        for (auto& example : batch) seen.push_back(static_cast<std::int64_t>(example.data.item<float>()));
    const auto order = interleaved(seen);
    for (std::int64_t i = 0; i < samples; ++i) REQUIRE(order[i] == i);
}

TEST_CASE("ShardLoader: a shard's samples as float images in [0, 1] and int64 labels, in shard order") {
    DatasetShard shard;
    shard.count = 5, shard.sample_shape = {2, 3}, shard.padded = 1;
    for (std::size_t i = 0; i < 5 * 6; ++i) shard.features.push_back(static_cast<std::uint8_t>(i * 8));
    shard.labels = {4, 3, 2, 1, 0};
    const trainrt::torch::ShardLoader loader(shard, 2);
    REQUIRE(loader.size() == 3);
    const trainrt::torch::Batch last = loader.batch(2);
    REQUIRE(last.features.sizes() == at::IntArrayRef({1, 1, 2, 3}));
    CHECK(last.features.flatten()[5].item<float>() == Approx(29 * 8 / 255.0f));
    CHECK(last.labels.scalar_type() == at::kLong);
    CHECK(last.labels[0].item<std::int64_t>() == 0);
    CHECK(loader.batch(0).labels[1].item<std::int64_t>() == 3);
    CHECK(trainrt::torch::ShardLoader(shard, 2, /*drop_last=*/true).size() == 2);
    CHECK_THROWS_AS(loader.batch(3), WorkloadError);
    CHECK_THROWS_AS(trainrt::torch::ShardLoader(shard, 0), WorkloadError);
}

TEST_CASE("GlobalBatchLoader: rank r of 3's parts of each global batch, empty ones too, with mean_over") {
    // 7 samples, global batch 3 over 3 ranks: blocks [0,3) [3,6) [6,7). Rank r's strided shard holds
    // positions r, r + 3, r + 6 (padded to 3 each); the last block has one sample, on rank 0 only.
    for (int r = 0; r < 3; ++r) {
        DatasetShard shard;
        shard.global_count = 7, shard.count = 3, shard.sample_shape = {1}, shard.padded = r == 0 ? 0 : 1;
        for (std::size_t k = 0; k < 3; ++k) {
            const auto position = static_cast<std::uint8_t>(std::min<std::size_t>(r + 3 * k, 6));
            shard.features.push_back(position);
            shard.labels.push_back(position);
        }
        const trainrt::torch::GlobalBatchLoader loader(shard, 3, r, 3);
        REQUIRE(loader.size() == 3);
        for (std::int64_t k = 0; k < 2; ++k) {
            const auto part = loader.part(k);
            REQUIRE(part.batch.labels.numel() == 1);
            CHECK(part.batch.labels[0].item<std::int64_t>() == 3 * k + r);
            CHECK(part.mean_over == Approx(1.0));
        }
        const auto last = loader.part(2);
        CHECK(last.batch.labels.numel() == (r == 0 ? 1 : 0));
        CHECK(last.batch.features.size(0) == last.batch.labels.numel());
        CHECK(last.mean_over == Approx(1.0 / 3));
        CHECK_THROWS_AS(loader.part(3), WorkloadError);
    }
    DatasetShard tiny;
    tiny.global_count = tiny.count = 2, tiny.sample_shape = {1}, tiny.features = {0, 1}, tiny.labels = {0, 1};
    CHECK_THROWS_AS(trainrt::torch::GlobalBatchLoader(tiny, 2, 0, 3), WorkloadError);  // fewer samples than ranks
}

TEST_CASE("to_tensor: a streamed batch's columns as tensors of their own type and shape") {
    const std::string path = fmt::format("/tmp/trainrt_to_tensor_{}_{}.h5", ::getpid(), rank());
    {
        trainrt::data::DatasetWriter writer(path, 0);
        writer.describe("t", "test", "x", "y");
        std::vector<float> x(10 * 6);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f;
        std::vector<std::int16_t> y{-5, -4, -3, -2, -1, 0, 1, 2, 3, 4};
        std::vector<trainrt::float16> h;
        for (int i = 0; i < 10; ++i) h.push_back(trainrt::float16::from_float(i * 0.25f));
        writer.add_column("train", {"x", trainrt::ColumnType::f32, {2, 3}, 10}).append(x.data(), 10);
        writer.add_column("train", {"y", trainrt::ColumnType::i16, {}, 10}).append(y.data(), 10);
        writer.add_column("train", {"h", trainrt::ColumnType::f16, {}, 10}).append(h.data(), 10);
        writer.commit();
    }
    trainrt::BatchOptions options;
    options.batch_size = 4;
    trainrt::BatchIterator batches = trainrt::data::open_dataset(path, "train", 0, 1, 0).iter_batches(options, 0);
    const trainrt::Batch* batch = batches.next();
    REQUIRE(batch != nullptr);
    at::Tensor x = trainrt::torch::to_tensor(batch->column("x"));
    at::Tensor y = trainrt::torch::to_tensor(batch->column("y"));
    at::Tensor h = trainrt::torch::to_tensor(batch->column("h"));
    CHECK(x.sizes() == at::IntArrayRef({4, 2, 3}));
    CHECK(x.scalar_type() == at::kFloat);
    CHECK(x[1][1][2].item<float>() == 5.5f);  // element 11 of the file
    CHECK(y.scalar_type() == at::kShort);
    CHECK(y[3].item<std::int16_t>() == -2);
    CHECK(h.scalar_type() == at::kHalf);
    CHECK(h[2].item<float>() == 0.5f);
    std::filesystem::remove(path);
}
