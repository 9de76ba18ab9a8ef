// The NCCL communicator on real GPUs (built only with CUDA; run only where a GPU is visible):
//   mpiexec -n N nccl_check          correctness: allreduce sum/mean/max (f32, f64, i64), async
//                                    allreduce, broadcast, allgather, barrier on device buffers;
//                                    the dispatcher sends host buffers to MPI, device ones to NCCL
//   mpiexec -n N nccl_check bench    time per call and busbw of trainrt's blocking NCCL allreduce
//                                    vs a plain ncclAllReduce + cudaStreamSynchronize loop,
//                                    interleaved rounds, medians, one JSON line per size
// Exit 77 (ctest: skipped, not passed) when no GPU is visible.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "comm/device_select.hpp"
#include "comm/gpu.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/mpi_world.hpp"
#include "launch/launcher.hpp"
#include "trainrt/error.hpp"

using namespace trainrt;

namespace {

int failures = 0;
// CUDA calls of the test itself: a failure ends it with the call and CUDA's text.
void cuda(cudaError_t code, const char* call) {
    if (code == cudaSuccess) return;
    std::printf("FAIL: %s: %s\n", call, cudaGetErrorString(code));
    std::exit(1);
}
#define CUDA(call) cuda((call), #call)

void expect(bool ok, const std::string& what) {
    if (!ok) ++failures;
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
}

template <class T>
std::vector<T> roundtrip(Communicator& comm, std::vector<T> host, ReduceOp op, bool async) {
    void* device = nullptr;
    CUDA(cudaMalloc(&device, host.size() * sizeof(T)));
    CUDA(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    CUDA(cudaDeviceSynchronize());  // the communicator's stream does not wait for the default one
    if (async) comm.allreduce_async(device, host.size(), dtype_of<T>(), op)->wait();
    else comm.allreduce(device, host.size(), dtype_of<T>(), op);
    CUDA(cudaMemcpy(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
    CUDA(cudaFree(device));
    return host;
}

void check(Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    auto sum = roundtrip<float>(comm, std::vector<float>(1000, float(r + 1)), ReduceOp::sum, false);
    expect(sum[0] == float(n * (n + 1) / 2) && sum[999] == sum[0], "allreduce f32 sum");
    auto mean = roundtrip<double>(comm, std::vector<double>(7, double(r)), ReduceOp::mean, true);
    expect(std::abs(mean[6] - double(n - 1) / 2) < 1e-12, "async allreduce f64 mean");
    auto max = roundtrip<std::int64_t>(comm, std::vector<std::int64_t>(3, r * 5), ReduceOp::max, false);
    expect(max[2] == (n - 1) * 5, "allreduce i64 max");
    std::int64_t host_value = r;
    comm.allreduce(&host_value, 1, DType::i64, ReduceOp::sum);  // host buffer: the MPI side
    expect(host_value == std::int64_t(n) * (n - 1) / 2, "host buffer through the dispatcher (MPI)");
    int* device = nullptr;
    CUDA(cudaMalloc(&device, sizeof(int) * (n + 1)));
    int mine = r == 0 ? 42 : -1;
    CUDA(cudaMemcpy(device, &mine, sizeof mine, cudaMemcpyHostToDevice));
    CUDA(cudaDeviceSynchronize());
    comm.broadcast(device, sizeof(int), 0);
    CUDA(cudaMemcpy(&mine, device, sizeof mine, cudaMemcpyDeviceToHost));
    expect(mine == 42, "broadcast from rank 0");
    int rank_value = r * 3;
    CUDA(cudaMemcpy(device, &rank_value, sizeof(int), cudaMemcpyHostToDevice));
    CUDA(cudaDeviceSynchronize());
    comm.allgather(device, device + 1, sizeof(int));
    std::vector<int> gathered(n);
    CUDA(cudaMemcpy(gathered.data(), device + 1, sizeof(int) * n, cudaMemcpyDeviceToHost));
    bool all = true;
    for (int i = 0; i < n; ++i) all = all && gathered[i] == i * 3;
    expect(all, "allgather");
    CUDA(cudaFree(device));
}

double timed_loop(int reps, const std::function<void()>& body) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) body();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps;
}

void bench(Communicator& comm) {
    cudaStream_t stream = static_cast<cudaStream_t>(comm::collective_stream(comm));
    ncclUniqueId id{};
    if (comm.rank() == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t plain = nullptr;
    ncclCommInitRank(&plain, comm.size(), id, comm.rank());
    // busbw as nccl-tests (0 on one rank: nothing crosses a bus, so the time per call is the figure).
    const double factor = 2.0 * (comm.size() - 1) / comm.size();
    for (std::size_t bytes = 4096; bytes <= (std::size_t(1) << 30); bytes <<= 2) {
        const std::size_t count = bytes / sizeof(float);
        float* buffer = nullptr;
        cudaMalloc(&buffer, bytes);
        const int reps = bytes >= (std::size_t(1) << 28) ? 10 : 200;
        auto ours = [&] { comm.allreduce(buffer, count, DType::f32, ReduceOp::sum); };
        auto raw = [&] {
            ncclAllReduce(buffer, buffer, count, ncclFloat32, ncclSum, plain, stream);
            cudaStreamSynchronize(stream);
        };
        for (int i = 0; i < 5; ++i) ours(), raw();  // warm-up
        std::vector<double> t_ours, t_raw;  // interleaved rounds, medians
        for (int round = 0; round < 5; ++round) {
            t_ours.push_back(timed_loop(reps, ours));
            t_raw.push_back(timed_loop(reps, raw));
        }
        std::sort(t_ours.begin(), t_ours.end());
        std::sort(t_raw.begin(), t_raw.end());
        const double mine = t_ours[2], theirs = t_raw[2];
        if (comm.rank() == 0)
            std::printf("{\"bench\":\"nccl_allreduce\",\"ranks\":%d,\"bytes\":%zu,\"trainrt_us\":%.2f,\"nccl_us\":%.2f,"
                        "\"trainrt_busbw_GBps\":%.3f,\"nccl_busbw_GBps\":%.3f,\"time_ratio\":%.4f}\n", comm.size(), bytes,
                        mine * 1e6, theirs * 1e6, bytes * factor / mine / 1e9, bytes * factor / theirs / 1e9,
                        mine / theirs);
        cudaFree(buffer);
    }
    ncclCommDestroy(plain);
}

}  // namespace

int main(int argc, char** argv) {
    auto launcher = launch::discover(launch::process_env());
    comm::MpiRuntime mpi(*launcher);
    Context context = comm::build_context(launcher->info());
    comm::DeviceRequest request;
    request.world_rank = context.world_rank;
    request.local_rank = context.local_rank;
    request.local_size = context.local_size;
    request.visible_devices = comm::visible_gpu_count(&request.why_none);
    int usable = 1;
    try {
        comm::bind_device(comm::select_device(request));  // trainrt's own rules (--gpus-per-task too)
    } catch (const Error& error) {
        usable = 0;
        if (context.world_rank == 0) std::printf("SKIP: %s\n", error.what());
    }
    MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (usable == 0) return 77;
    auto world = comm::make_mpi_communicator(MPI_COMM_WORLD);
    auto nccl = comm::make_nccl_communicator(*world);
    nccl->barrier();  // the NCCL communicator's own barrier (the dispatcher's goes through MPI)
    expect(true, "NCCL barrier returned");
    auto dispatch = comm::make_dispatch_communicator(std::move(world), std::move(nccl));
    if (argc > 1 && std::strcmp(argv[1], "bench") == 0) bench(*dispatch);
    else check(*dispatch);
    return failures == 0 ? 0 : 1;
}
