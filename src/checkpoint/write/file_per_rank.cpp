// The default layout: rank r writes rank_<r>.h5 with its own blocks and its share of the
// replicated tensors (write_plan.hpp). No MPI-IO: one plain POSIX file per rank, the fastest pattern on Lustre.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/write/fault.hpp"
#include "checkpoint/write/layout_writer.hpp"
#include "checkpoint/write/run_hasher.hpp"
#include "checkpoint/write/slab_write.hpp"
#include "h5/file.hpp"
#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "h5/props.hpp"
#include "h5/space.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {
namespace {

// A dataset's place is allocated at its creation (not at its first write), so that its bytes go
// out through `direct` instead of HDF5.
std::optional<WrittenRegion> write_part(hid_t file, const TensorPart& part, storage::WritebackWindow& writeback,
                                        storage::DirectWriter& direct, const std::string& path, RunHasher& runs) {
    h5::Dataspace space = h5::simple_space({part.shape.begin(), part.shape.end()}, part.name);
    h5::DatasetLayout layout;
    layout.allocate_early = true;
    layout.never_fill = true;
    h5::PropertyList create = h5::dataset_create_props(layout, part.name);
    h5::Dataset dataset = h5::create_dataset(file, dataset_path(part.name), file_type(part.type), space.get(),
                                             create.get(), part.name);
    std::optional<WrittenRegion> region =
        write_in_slabs(part, SlabTarget{dataset.get(), Shape(part.shape.size(), 0), H5P_DEFAULT, &writeback, &direct,
                                        path, [&runs](const WrittenRegion& placed) { runs.add(placed); }});
    h5::write_attribute(dataset.get(), "replicated", std::int64_t{part.replicated});
    write_shape_attribute(dataset.get(), "global_shape", part.global_shape);
    write_shape_attribute(dataset.get(), "offset", part.offset);
    return region;
}

// The rank's HDF5 file is written in place: HDF5 writes each tensor from the caller's memory
// straight into the file (no copy of the state). HDF5's metadata goes into a block before the
// data (metadata_room), so the tensors' bytes lie back to back after it, and a thread hashes them
// from the same memory while they are written (RunHasher): one checksum range per such run; the
// bytes between runs (metadata) are hashed while the fsync runs, read back from the page cache.
// HDF5 never meets a full disk (its 1.10 close path can crash after a failed
// flush, HDFFV-11052): an empty HDF5 file is built in memory and written with plain POSIX calls,
// then the blocks for the state and generous room for HDF5's metadata are reserved (fallocate), so
// no space fails there with a plain "No space left on device"; only then does HDF5 open the file
// and write into the reserved blocks. After closing, the file is cut back to HDF5's end of
// allocation.
std::uint64_t room_for(const std::vector<const TensorPart*>& parts, std::uint64_t bytes) {
    return bytes + 65536 + 8192 * static_cast<std::uint64_t>(parts.size());
}

// HDF5's metadata block: the root's attributes and about 470 bytes per dataset (header, name,
// three attributes) with room to spare. A block that fills is followed by another after the data
// written so far: one more run, still correct. Its unused bytes stay in the file (< 1 % here).
std::uint64_t metadata_room(const std::vector<const TensorPart*>& parts) {
    return 65536 + 640 * static_cast<std::uint64_t>(parts.size());
}

// An empty HDF5 file's bytes (superblock and root group), built with the core driver.
std::string empty_file_image() {
    h5::PropertyList fapl = h5::in_memory_file_access(64 * 1024);
    h5::File file = h5::create_file_with("trainrt-empty-image", fapl.get());
    h5::flush(file.get(), H5F_SCOPE_GLOBAL, "empty image");
    return h5::file_image(file.get(), "empty image");
}

// `path` as an empty HDF5 file with `bytes` reserved on disk: StorageError (no space, quota, file
// size limit) before HDF5 has touched it.
void create_reserved(const std::string& path, std::uint64_t bytes) {
    static const std::string image = empty_file_image();
    storage::Fd fd = storage::open_or_throw(path, O_WRONLY | O_CREAT | O_TRUNC);
    storage::write_all(fd.get(), image.data(), image.size(), path);
    const int error = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(std::max<std::uint64_t>(bytes, image.size())));
    if (error != 0)
        throw StorageError(fmt::format("storage: reserving {} bytes for {} failed: {}", bytes, path, std::strerror(error)));
}

// HDF5's end of allocation: where the file ends once the reserved room it did not use is cut off.
haddr_t end_of_allocation(hid_t file, const std::string& path) {
    h5::flush(file, H5F_SCOPE_LOCAL, path);
    return h5::end_of_allocation(file, path);
}

class FilePerRankWriter final : public LayoutWriter {
public:
    std::string name() const override { return "file_per_rank"; }

    RankWrite write(const WritePlan& plan, const std::string& dir, const Context& context) override {
        const int rank = context.world_rank;
        std::vector<const TensorPart*> mine;
        for (std::size_t i = 0; i < plan.blocks.size(); ++i)
            if (plan.writes[i]) mine.push_back(&plan.blocks[i]);
        const std::uint64_t bytes = plan.bytes();
        RankWrite result;
        if (mine.empty()) return result;
        const std::string file_name = rank_file_name(rank), path = dir + "/" + file_name;
        haddr_t end = 0;
        std::vector<WrittenRegion> regions;  // the tensors' bytes in the file, from memory
        RunHasher runs;
        create_reserved(path, room_for(mine, bytes));
        const storage::Fd writeback_fd = storage::open_or_throw(path, O_RDONLY);
        storage::WritebackWindow writeback(writeback_fd.get(), path, kSlabBytes);
        storage::DirectWriter direct(path);
        {
            h5::File file = h5::open_file_packed(path, metadata_room(mine));
            write_root_attributes(file.get(), context);
            h5::create_group(file.get(), "tensors");
            for (std::size_t i = 0; i < mine.size(); ++i) {
                if (i == mine.size() / 2) fault_point("mid_data", rank);
                if (auto region = write_part(file.get(), *mine[i], writeback, direct, path, runs)) regions.push_back(*region);
                result.parts.emplace_back(mine[i]->name, PartEntry{file_name, dataset_path(mine[i]->name),
                                                                   mine[i]->offset, mine[i]->shape});
            }
            direct.finish();
            end = end_of_allocation(file.get(), path);
            h5::close_file(file, path);
        }
        if (::truncate(path.c_str(), static_cast<off_t>(end)) != 0)
            throw StorageError(fmt::format("storage: truncating {} failed: {}", path, std::strerror(errno)));
        fault_point("after_data", rank);
        result.files.push_back(sync_and_describe_file(dir, file_name, std::move(regions), runs.finish()));
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
