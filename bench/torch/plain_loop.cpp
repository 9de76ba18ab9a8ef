// Benchmark baseline (make bench, part "torch"): torch_fashion_mlp's training loop in plain LibTorch
// with no trainrt: the same model, SGD lr 1e-3, batch 64, pixels/255, the data in memory in file
// order, one thread (OMP_NUM_THREADS, as bench/run.sh sets it). Prints one JSON line per epoch with
// the training loop's time, the figure torch_fashion_mlp reports as train_time_s on 1 rank.
//   plain_loop DATA.h5 EPOCHS
#include <cblas.h>
#include <hdf5.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct MlpImpl : torch::nn::Module {
    MlpImpl()
        : fc1(register_module("fc1", torch::nn::Linear(784, 512))),
          fc2(register_module("fc2", torch::nn::Linear(512, 512))),
          fc3(register_module("fc3", torch::nn::Linear(512, 10))) {}
    torch::Tensor forward(const torch::Tensor& x) {
        return torch::relu(fc3(torch::relu(fc2(torch::relu(fc1(x.flatten(1)))))));
    }
    torch::nn::Linear fc1, fc2, fc3;
};
TORCH_MODULE(Mlp);

std::vector<unsigned char> read_bytes(hid_t file, const char* path, std::size_t count) {
    std::vector<unsigned char> bytes(count);
    const hid_t dataset = H5Dopen2(file, path, H5P_DEFAULT);
    if (dataset < 0 || H5Dread(dataset, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0)
        throw std::runtime_error(std::string("cannot read ") + path);
    H5Dclose(dataset);
    return bytes;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: plain_loop DATA.h5 EPOCHS\n");
        return 2;
    }
    const int threads = std::getenv("OMP_NUM_THREADS") ? std::atoi(std::getenv("OMP_NUM_THREADS")) : 1;
    at::set_num_threads(threads);
    openblas_set_num_threads(threads);
    const hid_t file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) return std::fprintf(stderr, "plain_loop: cannot open %s\n", argv[1]), 1;
    const std::int64_t count = 60000;
    std::vector<unsigned char> pixels = read_bytes(file, "/train/images", count * 784);
    std::vector<unsigned char> labels = read_bytes(file, "/train/labels", count);
    H5Fclose(file);
    torch::manual_seed(0);
    Mlp model;
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(1e-3));
    for (int epoch = 0; epoch < std::atoi(argv[2]); ++epoch) {
        const auto start = std::chrono::steady_clock::now();
        for (std::int64_t first = 0; first < count; first += 64) {
            const std::int64_t n = std::min<std::int64_t>(64, count - first);
            torch::Tensor images = torch::from_blob(pixels.data() + first * 784, {n, 1, 28, 28}, torch::kByte)
                                       .to(torch::kFloat).div_(255.0f);
            torch::Tensor target = torch::from_blob(labels.data() + first, {n}, torch::kByte).to(torch::kLong);
            optimizer.zero_grad();
            torch::Tensor loss = torch::nn::functional::cross_entropy(model(images), target);
            loss.backward();
            optimizer.step();
            loss.item<double>();  // as the workload, which sums the loss every step
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("{\"bench\":\"plain_libtorch\",\"epoch\":%d,\"train_time_s\":%.4f}\n", epoch + 1, seconds);
        std::fflush(stdout);
    }
    return 0;
}
