// `trainrt data import fashion-mnist|mnist`: the IDX files (train-* and t10k-*, gzipped or not)
// into splits train and test with uint8 columns images [N, 28, 28] and labels [N].
#include <filesystem>

#include <fmt/format.h>

#include "data/dataset_file.hpp"
#include "data/dataset_writer.hpp"
#include "data/import/idx.hpp"
#include "data/import/importers.hpp"
#include "trainrt/error.hpp"

namespace trainrt::data {
namespace {

struct IdxSplit {
    std::string images_path, labels_path;
    IdxArray images;
    IdxArray labels;
};

std::string idx_path(const std::string& dir, const std::string& stem) {
    const std::string plain = fmt::format("{}/{}", dir, stem);
    return std::filesystem::exists(plain) ? plain : plain + ".gz";
}

IdxSplit read_split(const std::string& dir, const std::string& prefix, int classes) {
    IdxSplit split;
    split.images_path = idx_path(dir, prefix + "-images-idx3-ubyte");
    split.labels_path = idx_path(dir, prefix + "-labels-idx1-ubyte");
    split.images = read_idx(split.images_path);
    split.labels = read_idx(split.labels_path);
    if (split.images.dims.size() != 3 || split.images.dims[0] == 0)
        throw DataError(fmt::format("data: {} should hold 3-d images, has {} dimensions", split.images_path,
                                    split.images.dims.size()));
    if (split.labels.dims.size() != 1 || split.labels.dims[0] != split.images.dims[0])
        throw DataError(fmt::format("data: {} holds {} labels for {} images in {}", split.labels_path,
                                    split.labels.dims.empty() ? 0 : split.labels.dims[0], split.images.dims[0],
                                    split.images_path));
    for (std::uint8_t label : split.labels.values)
        if (label >= classes)
            throw DataError(fmt::format("data: {} holds label {} (expected 0..{})", split.labels_path, int(label),
                                        classes - 1));
    return split;
}

void write_split(DatasetWriter& writer, const std::string& name, const IdxSplit& split) {
    const std::uint64_t rows = split.labels.dims[0];
    const std::vector<std::size_t> image_shape(split.images.dims.begin() + 1, split.images.dims.end());
    writer.add_column(name, {"images", ColumnType::u8, image_shape, rows, split.images_path})
        .append(split.images.values.data(), rows);
    ColumnWriter& labels = writer.add_column(name, {"labels", ColumnType::u8, {}, rows, split.labels_path});
    labels.append(split.labels.values.data(), rows);
    labels.attribute("num_classes", std::int64_t{kFashionMnistClasses});
    writer.split_attribute(name, "source", split.images_path);
}

// The IDX files come split (train-*, t10k-*) with their labels, so the options that choose a split
// or a label have nothing to act on: a usage error, never silently ignored. --seed is only seen
// when not 0 (its default).
void refuse_unused(const std::string& kind, const ImportOptions& options) {
    const char* given = !options.split.empty() ? "--split"
                        : options.seed != 0      ? "--seed"
                        : !options.label.empty() ? "--label"
                                                 : nullptr;
    if (given)
        throw ConfigError(fmt::format("data import {}: {} does not apply (the IDX files come split into train and "
                                      "test, with their labels); leave it out", kind, given));
}

}  // namespace

ImportReport import_idx(const std::string& kind, const std::string& from_dir, const ImportOptions& options) {
    if (kind != "fashion-mnist" && kind != "mnist")
        throw DataError(fmt::format("data import: unknown IDX dataset '{}' (fashion-mnist or mnist)", kind));
    refuse_unused(kind, options);
    const IdxSplit train = read_split(from_dir, "train", kFashionMnistClasses);
    const IdxSplit test = read_split(from_dir, "t10k", kFashionMnistClasses);
    DatasetWriter writer(options.out, options.compression);
    const std::string source =
        fmt::format("{} (IDX{})", from_dir, kind == "fashion-mnist" ? ", Debian package dataset-fashion-mnist" : "");
    writer.describe(dataset_name(options, kind), source, "images", "labels");
    if (kind == "fashion-mnist") writer.root_attribute("classes", kFashionMnistClassNames);
    write_split(writer, "train", train);
    write_split(writer, "test", test);
    writer.commit();
    ImportReport report;
    report.what = fmt::format("images (u8 {}x{}) + labels (u8)", train.images.dims[1], train.images.dims[2]);
    report.splits = {{"train", train.labels.dims[0]}, {"test", test.labels.dims[0]}};
    return report;
}

}  // namespace trainrt::data
