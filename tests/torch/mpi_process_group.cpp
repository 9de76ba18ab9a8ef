// trainrt::torch::make_process_group under mpiexec: every collective against the same operation
// done with plain MPI on the same values.
// LibTorch first: it brings glog, whose CHECK macro would otherwise replace Catch2's (and a glog
// CHECK is no Catch2 assertion: it would not be counted, and a failure would abort).
#include <torch/torch.h>
#undef CHECK

#include <catch2/catch.hpp>
#include <mpi.h>

#include <vector>

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

// This rank's values: distinct per rank and element, exactly representable.
at::Tensor values_of(at::ScalarType type, std::int64_t count, int seed) {
    return (at::arange(count, at::kDouble) * 0.25 + rank() * 100.0 + seed).to(type);
}

at::Tensor plain_mpi_allreduce(const at::Tensor& mine, MPI_Op op) {
    at::Tensor out = at::empty_like(mine);
    const MPI_Datatype type = mine.scalar_type() == at::kFloat    ? MPI_FLOAT
                              : mine.scalar_type() == at::kDouble ? MPI_DOUBLE
                              : mine.scalar_type() == at::kInt    ? MPI_INT32_T
                                                                  : MPI_INT64_T;
    MPI_Allreduce(mine.data_ptr(), out.data_ptr(), static_cast<int>(mine.numel()), type, op, MPI_COMM_WORLD);
    return out;
}

}  // namespace

TEST_CASE("torch process group: allreduce matches plain MPI for every op and dtype", "[torch]") {
    auto pg = trainrt::torch::make_process_group();
    CHECK(pg->getBackendName() == "trainrt");
    CHECK(pg->getRank() == rank());
    CHECK(pg->getSize() == size());
    for (at::ScalarType type : {at::kFloat, at::kDouble, at::kLong, at::kInt}) {
        for (auto [op, mpi_op] : {std::pair{c10d::ReduceOp::SUM, MPI_SUM}, std::pair{c10d::ReduceOp::MAX, MPI_MAX},
                                  std::pair{c10d::ReduceOp::MIN, MPI_MIN}}) {
            INFO("dtype " << c10::toString(type) << ", op " << static_cast<int>(op));
            const at::Tensor mine = values_of(type, 1000, 3);
            std::vector<at::Tensor> tensors{mine.clone()};
            c10d::AllreduceOptions options;
            options.reduceOp = op;
            pg->allreduce(tensors, options)->wait();
            CHECK(at::equal(tensors[0], plain_mpi_allreduce(mine, mpi_op)));
        }
    }
    std::vector<at::Tensor> average{values_of(at::kDouble, 64, 1)};
    c10d::AllreduceOptions avg;
    avg.reduceOp = c10d::ReduceOp::AVG;
    pg->allreduce(average, avg)->wait();
    CHECK(at::allclose(average[0], plain_mpi_allreduce(values_of(at::kDouble, 64, 1), MPI_SUM) / size()));
}

TEST_CASE("torch process group: several allreduces in flight complete in any wait order", "[torch]") {
    auto pg = trainrt::torch::make_process_group();
    std::vector<std::vector<at::Tensor>> tensors;
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (int i = 0; i < 8; ++i) tensors.push_back({values_of(at::kFloat, 4096 * (i + 1), i)});
    for (auto& t : tensors) works.push_back(pg->allreduce(t));
    for (int i = 7; i >= 0; --i) {
        works[static_cast<std::size_t>(i)]->wait();
        CHECK(works[static_cast<std::size_t>(i)]->isCompleted());
        CHECK(works[static_cast<std::size_t>(i)]->isSuccess());
        CHECK(at::equal(tensors[static_cast<std::size_t>(i)][0],
                        plain_mpi_allreduce(values_of(at::kFloat, 4096 * (i + 1), i), MPI_SUM)));
        // DDP's reducer reads the result through the future.
        CHECK(works[static_cast<std::size_t>(i)]->getFuture()->value().toTensorVector().size() == 1);
    }
}

TEST_CASE("torch process group: a non-contiguous tensor is reduced in place", "[torch]") {
    auto pg = trainrt::torch::make_process_group();
    const at::Tensor base = values_of(at::kDouble, 12, 0).view({3, 4});
    std::vector<at::Tensor> tensors{base.clone().t()};  // a transposed view: not contiguous
    REQUIRE_FALSE(tensors[0].is_contiguous());
    pg->allreduce(tensors)->wait();
    CHECK(at::equal(tensors[0], plain_mpi_allreduce(base, MPI_SUM).t()));
}

TEST_CASE("torch process group: broadcast, allgather and barrier", "[torch]") {
    auto pg = trainrt::torch::make_process_group();
    const int root = size() - 1;
    std::vector<at::Tensor> tensors{values_of(at::kFloat, 10, 7)};
    c10d::BroadcastOptions from_last;
    from_last.rootRank = root;
    pg->broadcast(tensors, from_last)->wait();
    CHECK(at::equal(tensors[0], (at::arange(10, at::kDouble) * 0.25 + root * 100.0 + 7).to(at::kFloat)));

    std::vector<at::Tensor> input{at::full({2, 3}, rank(), at::kLong)};
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int r = 0; r < size(); ++r) outputs[0].push_back(at::empty({2, 3}, at::kLong));
    pg->allgather(outputs, input)->wait();
    for (int r = 0; r < size(); ++r) CHECK(at::equal(outputs[0][static_cast<std::size_t>(r)], at::full({2, 3}, r, at::kLong)));
    pg->barrier()->wait();
}

TEST_CASE("torch process group: all_gather_into_tensor, reduce_scatter_tensor and uint8 (DeepSpeed's ZeRO)", "[torch]") {
    auto pg = trainrt::torch::make_process_group();
    const at::Tensor mine = values_of(at::kFloat, 6, 2);
    at::Tensor all = at::empty({6 * size()}, at::kFloat);
    at::Tensor input = mine.clone();
    pg->_allgather_base(all, input)->wait();
    for (int r = 0; r < size(); ++r)
        CHECK(at::equal(all.narrow(0, 6 * r, 6), (at::arange(6, at::kDouble) * 0.25 + r * 100.0 + 2).to(at::kFloat)));
    at::Tensor buffer = at::zeros({6 * size()}, at::kFloat);  // in place: the input is this rank's slice
    at::Tensor slice = buffer.narrow(0, 6 * rank(), 6);
    slice.copy_(mine);
    pg->_allgather_base(buffer, slice)->wait();
    CHECK(at::equal(buffer, all));

    const at::Tensor whole = values_of(at::kDouble, 4 * size(), 5);
    at::Tensor part = at::empty({4}, at::kDouble);
    at::Tensor scattered = whole.clone();
    c10d::ReduceScatterOptions sum;
    pg->_reduce_scatter_base(part, scattered, sum)->wait();
    CHECK(at::equal(part, plain_mpi_allreduce(whole, MPI_SUM).narrow(0, 4 * rank(), 4)));
    CHECK(at::equal(scattered, whole));  // the input is left as it was

    std::vector<at::Tensor> bytes{at::full({5}, rank() + 1, at::kByte)};
    c10d::AllreduceOptions max;
    max.reduceOp = c10d::ReduceOp::MAX;
    pg->allreduce(bytes, max)->wait();
    CHECK(at::equal(bytes[0], at::full({5}, size(), at::kByte)));

    at::Tensor wrong = at::empty({6 * size() + 1}, at::kFloat);
    CHECK_THROWS_AS(pg->_allgather_base(wrong, input), CommError);  // refused before any rank communicates
}

TEST_CASE("torch process group: gather and scatter to and from the last rank (torch.distributed.checkpoint)", "[torch]") {
    auto pg = trainrt::torch::make_process_group();
    const int root = size() - 1;
    std::vector<at::Tensor> input{values_of(at::kDouble, 3, 4)};
    std::vector<std::vector<at::Tensor>> gathered(1);
    if (rank() == root)
        for (int r = 0; r < size(); ++r) gathered[0].push_back(at::zeros({3}, at::kDouble));
    c10d::GatherOptions to_last;
    to_last.rootRank = root;
    pg->gather(gathered, input, to_last)->wait();
    if (rank() == root)
        for (int r = 0; r < size(); ++r)
            CHECK(at::equal(gathered[0][static_cast<std::size_t>(r)], at::arange(3, at::kDouble) * 0.25 + r * 100.0 + 4));

    std::vector<at::Tensor> mine{at::zeros({2, 2}, at::kLong)};
    std::vector<std::vector<at::Tensor>> parts(1);
    if (rank() == root)
        for (int r = 0; r < size(); ++r) parts[0].push_back(at::full({2, 2}, 10 * r + 1, at::kLong));
    c10d::ScatterOptions from_last;
    from_last.rootRank = root;
    pg->scatter(mine, parts, from_last)->wait();
    CHECK(at::equal(mine[0], at::full({2, 2}, 10 * rank() + 1, at::kLong)));
}

TEST_CASE("torch process group: misuse is a CommError with what to do", "[torch]") {
    auto pg = trainrt::torch::make_process_group();
    std::vector<at::Tensor> shorts{at::ones({4}, at::kShort)};
    CHECK_THROWS_AS(pg->allreduce(shorts), CommError);  // refused before any rank communicates
    std::vector<at::Tensor> input{at::ones({2})};
    std::vector<std::vector<at::Tensor>> too_few(1, std::vector<at::Tensor>{at::empty({2})});
    if (size() > 1) CHECK_THROWS_AS(pg->allgather(too_few, input)->wait(), CommError);
}
