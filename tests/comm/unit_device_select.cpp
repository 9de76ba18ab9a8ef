// Which GPU a rank takes (comm/device_select.hpp), with faked device counts: no GPU needed.
#include <catch2/catch.hpp>

#include "comm/device_select.hpp"
#include "trainrt/error.hpp"

using trainrt::comm::DeviceRequest;
using trainrt::comm::select_device;

namespace {

DeviceRequest request(int local_rank, int local_size, int visible) {
    DeviceRequest r;
    r.world_rank = 10 + local_rank;
    r.local_rank = local_rank;
    r.local_size = local_size;
    r.visible_devices = visible;
    return r;
}

}  // namespace

TEST_CASE("one rank per GPU: device = local rank", "[gpu]") {
    for (int rank = 0; rank < 4; ++rank) CHECK(select_device(request(rank, 4, 4)) == rank);
    CHECK(select_device(request(1, 2, 4)) == 1);  // more GPUs than ranks: the first ones
}

TEST_CASE("Slurm narrowed CUDA_VISIBLE_DEVICES to one GPU per task: device 0 for every rank", "[gpu]") {
    for (int rank = 0; rank < 4; ++rank) CHECK(select_device(request(rank, 4, 1)) == 0);
}

TEST_CASE("more ranks than GPUs is an error naming the counts and the fix", "[gpu]") {
    DeviceRequest r = request(3, 4, 2);
    r.visible_env = "0,1";
    try {
        select_device(r);
        FAIL("no error");
    } catch (const trainrt::ConfigError& error) {
        const std::string text = error.what();
        CHECK(text.find("4 ranks on this node but 2 visible GPUs") != std::string::npos);
        CHECK(text.find("CUDA_VISIBLE_DEVICES '0,1'") != std::string::npos);
        CHECK(text.find("NCCL needs one GPU per rank") != std::string::npos);
        CHECK(text.find("srun --ntasks-per-node=2 --gpus-per-task=1") != std::string::npos);
        CHECK(error.exit_code() == 2);
    }
}

TEST_CASE("no visible GPU is an error with the reason CUDA gave", "[gpu]") {
    DeviceRequest r = request(0, 1, 0);
    r.why_none = "cudaGetDeviceCount: no CUDA-capable device is detected";
    try {
        select_device(r);
        FAIL("no error");
    } catch (const trainrt::ConfigError& error) {
        const std::string text = error.what();
        CHECK(text.find("rank 10 sees no CUDA device (CUDA_VISIBLE_DEVICES unset; cudaGetDeviceCount: no "
                        "CUDA-capable device is detected)") != std::string::npos);
        CHECK(text.find("set use_gpu = false") != std::string::npos);
    }
}
