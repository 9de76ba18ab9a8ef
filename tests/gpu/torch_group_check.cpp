// trainrt's torch process group (trainrt::torch::make_process_group) on CUDA tensors: what DDP of
// a LibTorch model across GPUs sends through it. Built on the GPU machine against its CUDA LibTorch
// (bench/gpu/build_torch_on_gpu.sh) and run by gpu.test_gpu_torch as `mpiexec -n 2` on one GPU:
// plain CUDA and MPI, so two ranks may share the GPU (NCCL is not used). Each collective on CUDA
// tensors (through a host copy) gives bitwise what the same collective gives on CPU tensors, and
// its tensors stay on the GPU; the collectives run on the group's communication thread.
// Exit 77 where this LibTorch has no CUDA or no GPU is visible.
#include <torch/torch.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "trainrt/torch.hpp"

namespace {

int failures = 0;
int rank = 0, ranks = 1;

void expect(bool ok, const std::string& what) {
    if (rank == 0) std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
    if (!ok) ++failures;
}

// The collective `run` on a CUDA copy of `cpu`'s tensors and on `cpu` itself: same values, and
// the CUDA ones still on the GPU.
template <typename Run>
void same_on_gpu(const std::string& what, std::vector<at::Tensor> cpu, Run run) {
    std::vector<at::Tensor> gpu;
    for (const at::Tensor& t : cpu) gpu.push_back(t.to(at::Device(at::kCUDA, 0)));
    run(gpu);
    run(cpu);
    bool ok = true;
    for (std::size_t i = 0; i < cpu.size(); ++i)
        ok = ok && gpu[i].is_cuda() && at::equal(gpu[i].cpu(), cpu[i]);
    expect(ok, what + " of CUDA tensors equals the same on CPU tensors, and they stay on the GPU");
}

at::Tensor values(std::int64_t count) { return at::arange(count, at::kFloat) * 0.25 + rank * 100.0; }

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (!at::hasCUDA() || ::torch::cuda::device_count() == 0) {
        if (rank == 0) std::printf("SKIP: this LibTorch has no CUDA, or no GPU is visible\n");
        MPI_Finalize();
        return 77;
    }
    {
        auto group = trainrt::torch::make_process_group();
        const std::pair<const char*, c10d::ReduceOp> ops[] = {
            {"sum", c10d::ReduceOp::SUM}, {"avg", c10d::ReduceOp::AVG}, {"max", c10d::ReduceOp::MAX}};
        for (const auto& [name, op] : ops) {
            c10d::AllreduceOptions options;
            options.reduceOp = op;
            same_on_gpu(std::string("allreduce ") + name, {values(1 << 20), values(7)},
                        [&](std::vector<at::Tensor>& t) { group->allreduce(t, options)->wait(); });
        }
        same_on_gpu("allreduce of a non-contiguous tensor", {values(64 * 48).view({64, 48}).t()},
                    [&](std::vector<at::Tensor>& t) { group->allreduce(t)->wait(); });
        c10d::BroadcastOptions from_last;
        from_last.rootRank = ranks - 1;
        same_on_gpu("broadcast", {values(1000)}, [&](std::vector<at::Tensor>& t) { group->broadcast(t, from_last)->wait(); });
        std::vector<at::Tensor> mine{values(10).cuda()};
        std::vector<std::vector<at::Tensor>> all(1);
        for (int r = 0; r < ranks; ++r) all[0].push_back(at::empty({10}, mine[0].options()));
        group->allgather(all, mine)->wait();
        bool gathered = true;
        for (int r = 0; r < ranks; ++r)
            gathered = gathered && all[0][r].is_cuda() &&
                       at::equal(all[0][r].cpu(), at::arange(10, at::kFloat) * 0.25 + r * 100.0);
        expect(gathered, "allgather into CUDA tensors: every rank's values, on the GPU");
        expect(ranks > 1, "run on " + std::to_string(ranks) + " ranks (one rank would reduce nothing)");
    }
    int worst = failures;
    MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst == 0 ? 0 : 1;
}
