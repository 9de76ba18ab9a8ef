#include "checkpoint/read/schema_check.hpp"

#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checkpoint/format/layout.hpp"
#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "h5/types.hpp"
#include "storage/page_coherence.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {
namespace {

Shape read_shape_attribute(hid_t object, const std::string& name) {
    const std::vector<std::int64_t> values = h5::read_int_array_attribute(object, name);
    return Shape(values.begin(), values.end());
}

void check_root(hid_t file, const std::string& path, const Manifest& manifest,
                std::vector<std::string>& problems) {
    if (h5::read_string_attribute(file, "format") != kDataFormat)
        problems.push_back(fmt::format("{}: root attribute format is not '{}'", path, kDataFormat));
    if (h5::read_int_attribute(file, "format_version") != 1)
        problems.push_back(fmt::format("{}: root attribute format_version is not 1", path));
    if (h5::read_string_attribute(file, "layout") != manifest.layout)
        problems.push_back(fmt::format("{}: root attribute layout differs from the manifest's '{}'",
                                       path, manifest.layout));
    if (h5::read_int_attribute(file, "world_size") != manifest.world_size)
        problems.push_back(fmt::format("{}: root attribute world_size differs from the manifest's {}",
                                       path, manifest.world_size));
}

// Where the open dataset of `part` (stored as `stored`, of `type`) lies as DatasetAddress says;
// nullopt when it does not (not allocated, chunked, another stored type or shape).
std::optional<std::uint64_t> contiguous_address(hid_t dataset, hid_t stored, const Shape& shape,
                                                const PartEntry& part, TensorType type) {
    const haddr_t at = h5::data_offset(dataset);
    if (at == HADDR_UNDEF || shape != part.shape) return std::nullopt;
    if (!h5::same_type(stored, memory_type(type), part.dataset)) return std::nullopt;
    return static_cast<std::uint64_t>(at);
}

// `addresses`: where the part's dataset lies goes there, when it lies as DatasetAddress says.
void check_part(hid_t file, const std::string& path, const std::string& tensor_name, const TensorEntry& tensor,
                const PartEntry& part, std::vector<std::string>& problems, DatasetAddresses* addresses) {
    const std::string where = fmt::format("{}:{}", path, part.dataset);
    h5::Dataset dataset;
    try {  // the dataset is looked for only when it does not open (a lookup costs as much as an open)
        dataset = h5::open_dataset(file, part.dataset);
    } catch (const H5Error& error) {
        const bool there = h5::exists(file, "tensors") && h5::exists(file, part.dataset);
        problems.push_back(there ? fmt::format("{}: {}", where, error.what()) : fmt::format("{}: dataset missing", where));
        return;
    }
    std::vector<hsize_t> dims = h5::dataset_shape(dataset.get());
    Shape stored(dims.begin(), dims.end());
    const bool whole = tensor.parts.size() == 1 && part.shape == tensor.global_shape;
    if (stored != part.shape && !(whole && stored == tensor.global_shape))
        problems.push_back(fmt::format("{}: shape [{}], the manifest says [{}]", where,
                                       fmt::join(stored, ", "), fmt::join(part.shape, ", ")));
    h5::Datatype type = h5::dataset_type(dataset.get(), where);
    if (!h5::same_type(type.get(), file_type(tensor.type), where))
        problems.push_back(fmt::format("{}: stored type is not {}", where, tensor_type_name(tensor.type)));
    if (read_shape_attribute(dataset.get(), "global_shape") != tensor.global_shape)
        problems.push_back(fmt::format("{}: global_shape attribute differs from the manifest for '{}'",
                                       where, tensor_name));
    if ((h5::read_int_attribute(dataset.get(), "replicated") != 0) != tensor.replicated)
        problems.push_back(fmt::format("{}: replicated attribute differs from the manifest", where));
    if (addresses == nullptr) return;
    if (auto at = contiguous_address(dataset.get(), type.get(), stored, part, tensor.type))
        (*addresses)[part.dataset] = {*at, tensor.type};
}

// The problems of the data files in `files` (every one when null); `in_memory`: see
// schema_problems_of.
std::vector<std::string> check_files(const std::string& checkpoint_dir, const Manifest& manifest,
                                     const std::set<std::string>* files, const FileInMemory* in_memory,
                                     DatasetAddresses* addresses) {
    std::vector<std::string> problems;
    std::map<std::string, std::vector<std::pair<std::string, const PartEntry*>>> by_file;
    std::set<std::string> listed;
    for (const FileEntry& file : manifest.files) listed.insert(file.name);
    for (const auto& [name, tensor] : manifest.tensors) {
        if (tensor.parts.empty()) problems.push_back(fmt::format("manifest: tensor '{}' has no parts", name));
        for (const PartEntry& part : tensor.parts) {
            if (!listed.count(part.file))
                problems.push_back(fmt::format("manifest: a part of tensor '{}' is in {}, a file it does not list",
                                               name, part.file));
            else if (files == nullptr || files->count(part.file))
                by_file[part.file].emplace_back(name, &part);
        }
    }
    for (const auto& [file_name, parts] : by_file) {
        const std::string path = checkpoint_dir + "/" + file_name;
        const bool held = in_memory != nullptr && file_name == in_memory->name;
        DatasetAddresses* noted = held ? addresses : nullptr;
        try {
            const bool from_memory = held && in_memory->bytes != nullptr;
            if (!from_memory) storage::forget_foreign_pages(path);  // HDF5 reads through this node's cache
            h5::File file = from_memory ? h5::open_image(in_memory->bytes, in_memory->size, path) : h5::open_file(path, false);
            check_root(file.get(), path, manifest, problems);
            for (const auto& [tensor_name, part] : parts)
                check_part(file.get(), path, tensor_name, manifest.tensors.at(tensor_name), *part, problems, noted);
        } catch (const Error& error) {
            problems.push_back(fmt::format("{}: {}", path, error.what()));
        }
    }
    return problems;
}

}  // namespace

std::vector<std::string> schema_problems(const std::string& checkpoint_dir, const Manifest& manifest) {
    return check_files(checkpoint_dir, manifest, nullptr, nullptr, nullptr);
}

std::vector<std::string> schema_problems_of(const std::string& checkpoint_dir, const Manifest& manifest,
                                            const std::set<std::string>& files, const FileInMemory* in_memory,
                                            DatasetAddresses& addresses) {
    return check_files(checkpoint_dir, manifest, &files, in_memory, &addresses);
}

}  // namespace trainrt::checkpoint
