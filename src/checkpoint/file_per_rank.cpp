// The default layout: rank r writes rank_<r>.h5 with its own blocks; rank 0 also writes the
// replicated tensors, once. No MPI-IO: plain POSIX files, the fastest pattern on Lustre.
#include <fmt/format.h>

#include "checkpoint/fault.hpp"
#include "checkpoint/layout.hpp"
#include "h5/h5.hpp"
#include "storage/posix.hpp"

namespace trainrt::checkpoint {
namespace {

bool writes_part(const TensorPart& part, int rank) { return !part.replicated || rank == 0; }

void write_part(hid_t file, const TensorPart& part) {
    std::vector<hsize_t> shape(part.shape.begin(), part.shape.end());
    h5::Handle space(TRAINRT_H5(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr),
                                part.name), H5Sclose);
    h5::Handle create(TRAINRT_H5(H5Pcreate(H5P_DATASET_CREATE), part.name), H5Pclose);
    TRAINRT_H5(H5Pset_fill_time(create.get(), H5D_FILL_TIME_NEVER), part.name);
    h5::Handle dataset(TRAINRT_H5(H5Dcreate2(file, dataset_path(part.name).c_str(),
                                             file_type(part.type), space.get(), H5P_DEFAULT,
                                             create.get(), H5P_DEFAULT), part.name), H5Dclose);
    if (part.elements() > 0)
        TRAINRT_H5(H5Dwrite(dataset.get(), memory_type(part.type), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                            part.data), part.name);
    h5::write_attribute(dataset.get(), "replicated", std::int64_t{part.replicated});
    write_shape_attribute(dataset.get(), "global_shape", part.global_shape);
    write_shape_attribute(dataset.get(), "offset", part.offset);
}

class FilePerRankWriter final : public LayoutWriter {
public:
    std::string name() const override { return "file_per_rank"; }

    RankWrite write(const CheckpointState& state, const std::string& dir,
                    const Context& context) override {
        const int rank = context.world_rank;
        std::vector<const TensorPart*> mine;
        for (const TensorPart& part : state.tensors())
            if (writes_part(part, rank)) mine.push_back(&part);
        RankWrite result;
        if (mine.empty()) return result;
        const std::string file_name = fmt::format("rank_{:05d}.h5", rank);
        const std::string path = dir + "/" + file_name;
        {
            h5::Handle file = h5::create_file(path);
            write_root_attributes(file.get(), context);
            h5::Handle group = h5::create_group(file.get(), "tensors");
            for (std::size_t i = 0; i < mine.size(); ++i) {
                if (i == mine.size() / 2) fault_point("mid_data", rank);
                write_part(file.get(), *mine[i]);
                result.parts.emplace_back(mine[i]->name, PartEntry{file_name, dataset_path(mine[i]->name),
                                                                   mine[i]->offset, mine[i]->shape});
            }
        }
        fault_point("after_data", rank);
        storage::fsync_path(path);
        result.files.push_back(describe_file(dir, file_name));
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
