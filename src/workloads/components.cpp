#include "workloads/components.hpp"

#include <dlfcn.h>

#include <filesystem>

#include <fmt/format.h>

#include "trainrt/build_config.hpp"
#include "trainrt/error.hpp"

namespace trainrt::workloads {
namespace {

// "libtrainrt_torch.so.0.1": the SONAME an in-tree or installed component has.
std::string versioned(const std::string& base) {
    const std::string version = TRAINRT_VERSION;
    return base + ".so." + version.substr(0, version.find('.', version.find('.') + 1));
}

// The directory libtrainrt was loaded from (the components are installed beside it).
std::string library_dir() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&component_workloads), &info) == 0 || info.dli_fname == nullptr) return ".";
    return std::filesystem::path(info.dli_fname).parent_path().string();
}

}  // namespace

std::vector<OptionSpec> torch_fashion_keys() {
    OptionSpec epochs{"train.epochs", "3", ValueKind::integer, "passes over the training set"};
    epochs.min = 1;
    OptionSpec batch{"train.batch_size", "64", ValueKind::integer, "global batch, split evenly over the ranks"};
    batch.min = 1;
    OptionSpec lr{"train.lr", "", ValueKind::real, "learning rate (default: the workload's recipe: SGD 0.001, Adam 0.001)"};
    lr.min = 1e-12;
    return {epochs, batch, lr,
            {"train.init_weights", "", ValueKind::path,
             "torch_fashion_mlp: HDF5 weights to start from (hdf5_schemas/mlp_weights.md)"},
            {"train.save_weights", "", ValueKind::path, "torch_fashion_mlp: write the final weights here (rank 0)"}};
}

bool is_python_workload(const std::string& name) { return name.rfind("python:", 0) == 0; }

const std::vector<ComponentWorkload>& component_workloads() {
    static const std::string kTorchBuild = "TRAINRT_WITH_TORCH, libtorch-dev";
    static const std::vector<ComponentWorkload> all = {
        {"torch_fashion_mlp", "Ray Train's FashionMNIST recipe in LibTorch: MLP 784-512-512-10, SGD, DDP",
         "LibTorch", kTorchBuild, versioned("libtrainrt_torch"), TRAINRT_HAS_TORCH == 1, torch_fashion_keys()},
        {"torch_fashion_cnn", "a convolutional net on FashionMNIST in LibTorch: conv/pool/conv/pool/fc/fc, Adam, DDP",
         "LibTorch", kTorchBuild, versioned("libtrainrt_torch"), TRAINRT_HAS_TORCH == 1, torch_fashion_keys()},
        {"python", "a Python training function: run.workload = python:FILE.py:FUNC or python:package.module:FUNC",
         "Python", "TRAINRT_WITH_PYTHON, python3-dev and pybind11-dev", versioned("libtrainrt_python"),
         TRAINRT_HAS_PYTHON == 1, {}},
    };
    return all;
}

std::optional<ComponentWorkload> component_workload(const std::string& name) {
    for (const ComponentWorkload& workload : component_workloads())
        if (workload.name == name) return workload;
    return std::nullopt;
}

std::string component_library_path(const ComponentWorkload& workload) {
    if (!workload.built)
        throw ConfigError(fmt::format("config: workload '{}' is in trainrt's {} component, which this trainrt "
                                      "was built without ({}); use a trainrt built with it (`trainrt --version` "
                                      "lists its components)",
                                      workload.name, workload.component, workload.build_with));
    const std::string path = library_dir() + "/" + workload.library;
    if (!std::filesystem::exists(path))
        throw ConfigError(fmt::format("config: workload '{}' needs {} ({} component), which is not beside "
                                      "libtrainrt ({}); reinstall trainrt with its {} component",
                                      workload.name, path, workload.component, library_dir(), workload.component));
    return path;
}

}  // namespace trainrt::workloads
