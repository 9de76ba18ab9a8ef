// The default layout: rank r writes rank_<r>.h5 with its own blocks; rank 0 also writes the
// replicated tensors, once. No MPI-IO: one plain POSIX file per rank, the fastest pattern on Lustre.
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/fault.hpp"
#include "checkpoint/layout.hpp"
#include "h5/h5.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {
namespace {

bool writes_part(const TensorPart& part, int rank) { return !part.replicated || rank == 0; }

void write_part(hid_t file, const TensorPart& part) {
    std::vector<hsize_t> shape(part.shape.begin(), part.shape.end());
    h5::Dataspace space(TRAINRT_H5(
        H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr), part.name));
    h5::PropertyList create(TRAINRT_H5(H5Pcreate(H5P_DATASET_CREATE), part.name));
    TRAINRT_H5(H5Pset_fill_time(create.get(), H5D_FILL_TIME_NEVER), part.name);
    h5::Dataset dataset(TRAINRT_H5(H5Dcreate2(file, dataset_path(part.name).c_str(),
                                              file_type(part.type), space.get(), H5P_DEFAULT,
                                              create.get(), H5P_DEFAULT), part.name));
    if (part.elements() > 0)
        TRAINRT_H5(H5Dwrite(dataset.get(), memory_type(part.type), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                            part.data), part.name);
    h5::write_attribute(dataset.get(), "replicated", std::int64_t{part.replicated});
    write_shape_attribute(dataset.get(), "global_shape", part.global_shape);
    write_shape_attribute(dataset.get(), "offset", part.offset);
}

// The rank's HDF5 file is built in memory (HDF5's core driver) and written with one POSIX
// write + fsync. Two reasons: a full disk then fails in our write(2) with a plain "No space left
// on device" and never inside HDF5 (whose 1.10 close path crashes at exit after a failed flush,
// HDFFV-11052); and the file's XXH3-64 comes from memory, with no read-back. The cost is one
// host copy of the rank's state while it is written.
h5::File create_in_memory(std::uint64_t expected_bytes) {
    h5::PropertyList fapl(TRAINRT_H5(H5Pcreate(H5P_FILE_ACCESS), "core fapl"));
    const std::size_t increment = static_cast<std::size_t>(expected_bytes + (1 << 20));
    TRAINRT_H5(H5Pset_fapl_core(fapl.get(), increment, false), "core fapl");
    return h5::File(TRAINRT_H5(H5Fcreate("trainrt-checkpoint-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                               "in-memory checkpoint file"));
}

// The file's bytes, in a buffer that is not zeroed first (it is about the size of the state).
struct FileImage {
    std::unique_ptr<char[]> bytes;
    std::size_t size = 0;
};

FileImage file_image(hid_t file) {
    TRAINRT_H5(H5Fflush(file, H5F_SCOPE_GLOBAL), "in-memory checkpoint file");
    ssize_t size = TRAINRT_H5(H5Fget_file_image(file, nullptr, 0), "file image size");
    FileImage image{std::unique_ptr<char[]>(new char[static_cast<std::size_t>(size)]),
                    static_cast<std::size_t>(size)};
    TRAINRT_H5(H5Fget_file_image(file, image.bytes.get(), image.size), "file image");
    return image;
}

FileEntry write_image(const std::string& dir, const std::string& name, const FileImage& image) {
    const std::string path = dir + "/" + name;
    {
        storage::Fd fd = storage::open_or_throw(path, O_WRONLY | O_CREAT | O_TRUNC);
        storage::write_all(fd.get(), image.bytes.get(), image.size, path);
        if (::fsync(fd.get()) != 0)
            throw StorageError(fmt::format("storage: fsync of {} failed: {}", path, std::strerror(errno)));
    }
    return {name, image.size, fmt::format("{:016x}", XXH3_64bits(image.bytes.get(), image.size))};
}

class FilePerRankWriter final : public LayoutWriter {
public:
    std::string name() const override { return "file_per_rank"; }

    RankWrite write(const CheckpointState& state, const std::string& dir,
                    const Context& context) override {
        const int rank = context.world_rank;
        std::vector<const TensorPart*> mine;
        std::uint64_t bytes = 0;
        for (const TensorPart& part : state.tensors())
            if (writes_part(part, rank)) {
                mine.push_back(&part);
                bytes += part.bytes();
            }
        RankWrite result;
        if (mine.empty()) return result;
        const std::string file_name = fmt::format("rank_{:05d}.h5", rank);
        FileImage image;
        {
            h5::File file = create_in_memory(bytes);
            write_root_attributes(file.get(), context);
            h5::create_group(file.get(), "tensors");
            for (std::size_t i = 0; i < mine.size(); ++i) {
                if (i == mine.size() / 2) fault_point("mid_data", rank);
                write_part(file.get(), *mine[i]);
                result.parts.emplace_back(mine[i]->name, PartEntry{file_name, dataset_path(mine[i]->name),
                                                                   mine[i]->offset, mine[i]->shape});
            }
            image = file_image(file.get());
        }
        fault_point("after_data", rank);
        result.files.push_back(write_image(dir, file_name, image));
        return result;
    }

private:
    static void write_root_attributes(hid_t file, const Context& context) {
        h5::write_attribute(file, "format", kDataFormat);
        h5::write_attribute(file, "format_version", std::int64_t{1});
        h5::write_attribute(file, "layout", "file_per_rank");
        h5::write_attribute(file, "rank", std::int64_t{context.world_rank});
        h5::write_attribute(file, "world_size", std::int64_t{context.world_size});
    }
};

}  // namespace

std::unique_ptr<LayoutWriter> make_file_per_rank_writer(const LayoutOptions&) {
    return std::make_unique<FilePerRankWriter>();
}

}  // namespace trainrt::checkpoint
