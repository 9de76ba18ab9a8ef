#include "data/import.hpp"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "data/idx.hpp"
#include "data/schema.hpp"
#include "h5/h5.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

struct Split {
    IdxArray images;
    IdxArray labels;
};

Split read_split(const std::string& dir, const std::string& prefix) {
    std::string images_path = fmt::format("{}/{}-images-idx3-ubyte.gz", dir, prefix);
    std::string labels_path = fmt::format("{}/{}-labels-idx1-ubyte.gz", dir, prefix);
    Split split{read_idx(images_path), read_idx(labels_path)};
    if (split.images.dims.size() != 3)
        throw DataError(fmt::format("data: {} should hold 3-d images, has {} dimensions",
                                    images_path, split.images.dims.size()));
    if (split.labels.dims.size() != 1 || split.labels.dims[0] != split.images.dims[0])
        throw DataError(fmt::format("data: {} holds {} labels for {} images in {}", labels_path,
                                    split.labels.dims.empty() ? 0 : split.labels.dims[0],
                                    split.images.dims[0], images_path));
    for (std::uint8_t label : split.labels.values)
        if (label >= kFashionMnistClasses)
            throw DataError(fmt::format("data: {} holds label {} (expected 0..9)", labels_path,
                                        int(label)));
    return split;
}

void write_split(hid_t file, const std::string& name, const Split& split,
                 const std::string& source_prefix) {
    h5::Group group = h5::create_group(file, name);
    std::vector<hsize_t> image_shape(split.images.dims.begin(), split.images.dims.end());
    h5::write_dataset(group.get(), "images", H5T_NATIVE_UINT8, image_shape,
                      split.images.values.data());
    h5::write_dataset(group.get(), "labels", H5T_NATIVE_UINT8, {split.labels.dims[0]},
                      split.labels.values.data());
    h5::write_attribute(group.get(), "source", source_prefix);
    h5::write_attribute(group.get(), "count", static_cast<std::int64_t>(split.labels.dims[0]));
}

}  // namespace

ImportSummary import_fashion_mnist(const std::string& from_dir, const std::string& out) {
    Split train = read_split(from_dir, "train");
    Split test = read_split(from_dir, "t10k");
    std::string parent = std::filesystem::path(out).parent_path().string();
    if (!parent.empty()) storage::make_dirs(parent);
    std::string temporary = fmt::format("{}.tmp.{}", out, ::getpid());
    try {
        h5::File file = h5::create_file(temporary);
        h5::write_attribute(file.get(), "format", kDatasetFormat);
        h5::write_attribute(file.get(), "format_version", kDatasetFormatVersion);
        h5::write_attribute(file.get(), "name", "fashion-mnist");
        h5::write_attribute(file.get(), "source", from_dir + " (Debian package dataset-fashion-mnist, IDX)");
        h5::write_attribute(file.get(), "classes", kFashionMnistClassNames);
        write_split(file.get(), "train", train, from_dir + "/train-*-ubyte.gz");
        write_split(file.get(), "test", test, from_dir + "/t10k-*-ubyte.gz");
    } catch (...) {
        std::filesystem::remove(temporary);
        throw;
    }
    storage::fsync_path(temporary);
    storage::rename_durable(temporary, out);
    return {train.labels.dims[0], test.labels.dims[0]};
}

}  // namespace trainrt::data
