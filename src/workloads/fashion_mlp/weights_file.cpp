#include "workloads/fashion_mlp/weights_file.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::workloads::fashion_mlp {
namespace {

void read_tensor(hid_t file, const std::string& path, const std::string& name,
                 const std::vector<hsize_t>& expected, std::vector<float>& out) {
    if (!h5::exists(file, name))
        throw WorkloadError(fmt::format("fashion_mlp: init_weights {} has no tensor '{}' "
                                        "(expected float32 of shape [{}])",
                                        path, name, fmt::join(expected, ", ")));
    h5::Dataset dataset = h5::open_dataset(file, name);
    std::vector<hsize_t> shape = h5::dataset_shape(dataset.get());
    if (shape != expected)
        throw WorkloadError(fmt::format("fashion_mlp: init_weights {}: tensor '{}' has shape [{}], "
                                        "the model needs [{}]",
                                        path, name, fmt::join(shape, ", "), fmt::join(expected, ", ")));
    h5::read_all(dataset.get(), H5T_NATIVE_FLOAT, out.data(), name);
}

}  // namespace

void load_weights(const std::string& path, Mlp& model) {
    if (!std::filesystem::exists(path))
        throw WorkloadError(fmt::format("fashion_mlp: init_weights file {} does not exist", path));
    h5::File file = h5::open_file(path, false);
    for (int l = 0; l < kLayers; ++l) {
        Layer& layer = model.layers()[l];
        hsize_t outputs = layer.outputs, inputs = layer.inputs;
        read_tensor(file.get(), path, fmt::format("fc{}.weight", l + 1), {outputs, inputs},
                    layer.weight);
        read_tensor(file.get(), path, fmt::format("fc{}.bias", l + 1), {outputs}, layer.bias);
    }
}

void save_weights(const std::string& path, const Mlp& model) {
    std::string temporary = path + ".tmp";
    {
        h5::File file = h5::create_file(temporary);
        h5::write_attribute(file.get(), "format", "trainrt-mlp-weights");
        h5::write_attribute(file.get(), "format_version", std::int64_t{1});
        for (int l = 0; l < kLayers; ++l) {
            const Layer& layer = model.layers()[l];
            hsize_t outputs = layer.outputs, inputs = layer.inputs;
            h5::write_dataset(file.get(), fmt::format("fc{}.weight", l + 1), H5T_NATIVE_FLOAT,
                              {outputs, inputs}, layer.weight.data());
            h5::write_dataset(file.get(), fmt::format("fc{}.bias", l + 1), H5T_NATIVE_FLOAT,
                              {outputs}, layer.bias.data());
        }
    }
    storage::fsync_path(temporary);
    storage::rename_durable(temporary, path);
}

}  // namespace trainrt::workloads::fashion_mlp
