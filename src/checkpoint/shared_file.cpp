// The "shared" checkpoint layout: every rank writes its blocks into one data.h5 in the pending
// checkpoint directory through parallel HDF5 (MPI-IO driver, collective transfers).
//
// Order of a write, every step collective:
//   1. agree that all ranks describe the same tensors and that every block is valid; a mismatch
//      or a bad block is a CheckpointError on every rank, before anything is created;
//   2. create data.h5, its attributes and one contiguous dataset per tensor (global shape),
//      and flush that metadata;
//   3. one collective H5Dwrite per tensor: sharded tensors each rank its block, replicated
//      tensors rank 0 alone (the others select nothing but still take part);
//   4. agree, then close (after any rank's failure: leave the file for HDF5's shutdown), then
//      every rank fsyncs the file (a Lustre client flushes only its own pages);
//   5. agree on the outcome: every rank returns, or every rank throws.
// Tensors are created and written in name order, so all ranks issue the same collectives.
// A failure inside one collective HDF5 call is reported by HDF5/ROMIO on every rank taking part;
// the agreements keep a rank that failed alone from leaving the others waiting.
#include <mpi.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checkpoint/fault.hpp"
#include "checkpoint/layout.hpp"
#include "comm/mpi_check.hpp"
#include "comm/mpi_communicator.hpp"
#include "h5/h5.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {
namespace {

constexpr const char* kDataFile = "data.h5";
constexpr std::int64_t kDataFormatVersion = 1;

using Parts = std::vector<const TensorPart*>;

// ---------------------------------------------------------------- small helpers

// Move-only owner of an MPI_Info (ROMIO hints); freed on destruction, never throws.
class MpiInfo {
public:
    MpiInfo() { TRAINRT_MPI_CHECK(MPI_Info_create(&info_)); }
    ~MpiInfo() {
        if (info_ != MPI_INFO_NULL) MPI_Info_free(&info_);
    }
    MpiInfo(const MpiInfo&) = delete;
    MpiInfo& operator=(const MpiInfo&) = delete;
    void set(const char* key, const std::string& value) {
        TRAINRT_MPI_CHECK(MPI_Info_set(info_, key, value.c_str()));
    }
    MPI_Info get() const { return info_; }

private:
    MPI_Info info_ = MPI_INFO_NULL;
};

// Owner of the parallel data file. close() reports failure: H5Fclose is where parallel HDF5
// writes the last metadata, collectively. abandon() leaves the file for HDF5 to close at
// MPI_Finalize instead: after a failed write its metadata may be dirty and unwritable, and
// HDF5 1.10 frees a file whose H5Fclose failed yet keeps its id, then crashes closing that id
// at shutdown (HDFFV-11052, fixed in 1.14.1). Only failed saves leave a file open.
class ParallelFile {
public:
    hid_t get() const { return file_.get(); }
    void create(const std::string& path, hid_t fapl) {
        file_ = h5::File(
            TRAINRT_H5(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), path));
    }
    void close(const std::string& path) {
        const hid_t id = file_.release();
        TRAINRT_H5(H5Fclose(id), path);
    }
    void abandon() { file_.release(); }

private:
    h5::File file_;  // closed on destruction unless closed or abandoned
};

// Runs `step` and returns what it threw (null when nothing), so that the ranks can agree on
// the outcome before any of them acts on a failure.
template <class Step> std::exception_ptr attempt(Step&& step) {
    try {
        step();
    } catch (...) {
        return std::current_exception();
    }
    return nullptr;
}

std::uint64_t element_count(const Shape& shape) {
    std::uint64_t count = 1;
    for (std::uint64_t extent : shape) count *= extent;
    return count;
}

std::vector<hsize_t> to_hsize(const Shape& shape) { return {shape.begin(), shape.end()}; }

std::string shape_text(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// "1, 3 and 2 more": ranks named in a message, a bounded list.
std::string rank_list(const std::vector<int>& ranks) {
    constexpr std::size_t kShown = 8;
    std::vector<int> shown(ranks.begin(), ranks.begin() + std::min(ranks.size(), kShown));
    std::string text = fmt::format("{}", fmt::join(shown, ", "));
    if (ranks.size() > kShown) text += fmt::format(" and {} more", ranks.size() - kShown);
    return text;
}

int comm_rank(MPI_Comm comm) {
    int rank = 0;
    TRAINRT_MPI_CHECK(MPI_Comm_rank(comm, &rank));
    return rank;
}

int comm_size(MPI_Comm comm) {
    int size = 0;
    TRAINRT_MPI_CHECK(MPI_Comm_size(comm, &size));
    return size;
}

// ---------------------------------------------------------------- agreeing on an outcome

// Collective: the ranks whose step failed, the same list on every rank.
std::vector<int> failed_ranks(const std::exception_ptr& failure, MPI_Comm comm) {
    const int mine = failure ? 1 : 0;
    std::vector<int> all(static_cast<std::size_t>(comm_size(comm)));
    TRAINRT_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, comm));
    std::vector<int> failed;
    for (std::size_t r = 0; r < all.size(); ++r)
        if (all[r] != 0) failed.push_back(static_cast<int>(r));
    return failed;
}

// After failed_ranks: the failed ranks rethrow their own error, the others throw a
// CheckpointError naming them, so that no rank goes on (or waits) alone.
void throw_if_failed(const std::exception_ptr& failure, const std::vector<int>& failed,
                     const std::string& what) {
    if (failure) std::rethrow_exception(failure);
    if (!failed.empty())
        throw CheckpointError(fmt::format("checkpoint (shared layout): {} failed on rank(s) {} "
                                          "(their error says why)",
                                          what, rank_list(failed)));
}

// Collective: returns on every rank when no rank failed, throws on every rank otherwise.
void agree_or_rethrow(const std::exception_ptr& failure, MPI_Comm comm, const std::string& what) {
    throw_if_failed(failure, failed_ranks(failure, comm), what);
}

// ---------------------------------------------------------------- collective validation

Parts sorted_parts(const CheckpointState& state) {
    Parts parts;
    for (const TensorPart& part : state.tensors()) parts.push_back(&part);
    std::sort(parts.begin(), parts.end(),
              [](const TensorPart* a, const TensorPart* b) { return a->name < b->name; });
    return parts;
}

// Why this part cannot be written here, or "" when it can.
std::string part_problem(const TensorPart& part) {
    const std::size_t dims = part.global_shape.size();
    if (part.name.empty() || part.name.find('/') != std::string::npos)
        return fmt::format("tensor name '{}' is empty or contains '/'", part.name);
    if (part.offset.size() != dims || part.shape.size() != dims)
        return fmt::format("tensor '{}': offset {} and shape {} do not have the {} dimensions of "
                           "its global shape {}", part.name, shape_text(part.offset),
                           shape_text(part.shape), dims, shape_text(part.global_shape));
    for (std::size_t d = 0; d < dims; ++d) {
        if (part.shape[d] > part.global_shape[d] ||
            part.offset[d] > part.global_shape[d] - part.shape[d])
            return fmt::format("tensor '{}': block at offset {} with shape {} lies outside its "
                               "global shape {}", part.name, shape_text(part.offset),
                               shape_text(part.shape), shape_text(part.global_shape));
    }
    if (part.replicated && (part.shape != part.global_shape ||
                            part.offset != Shape(dims, 0)))
        return fmt::format("replicated tensor '{}' must be given whole", part.name);
    if (part.data == nullptr && element_count(part.shape) > 0)
        return fmt::format("tensor '{}' has no data", part.name);
    return "";
}

// The first problem with this rank's parts (sorted by name), or "".
std::string local_problem(const Parts& parts) {
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0 && parts[i]->name == parts[i - 1]->name)
            return fmt::format("tensor '{}' is given twice", parts[i]->name);
        std::string problem = part_problem(*parts[i]);
        if (!problem.empty()) return problem;
    }
    return "";
}

// What every rank must agree on: names, types, global shapes and replicated flags, in name
// order. The name is length-prefixed so that no two lists serialise alike.
std::uint64_t tensor_list_hash(const Parts& parts) {
    std::string text;
    for (const TensorPart* part : parts)
        text += fmt::format("{}:{}:{}:{}:{};", part->name.size(), part->name,
                            static_cast<int>(part->type), part->replicated ? 1 : 0,
                            shape_text(part->global_shape));
    return XXH3_64bits(text.data(), text.size());
}

// Throws the same CheckpointError on every rank unless all ranks' parts are valid and every
// rank describes the same tensors. The rank with the bad part names it; the others name it.
void agree_on_tensors(const Parts& parts, MPI_Comm comm) {
    const std::string problem = local_problem(parts);
    const std::array<std::uint64_t, 3> mine{problem.empty() ? 0u : 1u, parts.size(),
                                            tensor_list_hash(parts)};
    std::vector<std::uint64_t> all(3 * static_cast<std::size_t>(comm_size(comm)));
    TRAINRT_MPI_CHECK(MPI_Allgather(mine.data(), 3, MPI_UINT64_T, all.data(), 3, MPI_UINT64_T,
                                    comm));
    if (!problem.empty()) throw CheckpointError("checkpoint (shared layout): " + problem);
    std::vector<int> invalid, differing;
    for (std::size_t r = 0; r < all.size() / 3; ++r) {
        if (all[3 * r] != 0) invalid.push_back(static_cast<int>(r));
        if (all[3 * r + 1] != all[1] || all[3 * r + 2] != all[2])
            differing.push_back(static_cast<int>(r));
    }
    if (!invalid.empty())
        throw CheckpointError(fmt::format("checkpoint (shared layout): rank(s) {} gave invalid "
                                          "tensor parts (their error says which)",
                                          rank_list(invalid)));
    if (!differing.empty())
        throw CheckpointError(fmt::format(
            "checkpoint (shared layout): the ranks describe different tensors (names, types, "
            "global shapes or replicated flags): rank 0 has {} tensor(s); rank(s) {} differ",
            all[1], rank_list(differing)));
}

// Sharded blocks must leave no hole: fill time is NEVER, so an element no rank writes would be
// garbage that the manifest vouches for. The same block on several ranks (hybrid sharding) is
// allowed, so the test is that the blocks hold at least as many elements as the tensor.
void check_coverage(const Parts& parts, MPI_Comm comm) {
    std::vector<std::uint64_t> mine, total(parts.size());
    for (const TensorPart* part : parts)
        mine.push_back(part->replicated ? 0 : element_count(part->shape));
    TRAINRT_MPI_CHECK(MPI_Allreduce(mine.data(), total.data(), static_cast<int>(mine.size()),
                                    MPI_UINT64_T, MPI_SUM, comm));
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const TensorPart& part = *parts[i];
        const std::uint64_t needed = element_count(part.global_shape);
        if (!part.replicated && total[i] < needed)
            throw CheckpointError(fmt::format(
                "checkpoint (shared layout): the ranks' blocks of tensor '{}' hold {} elements, "
                "fewer than the {} of its global shape {}: part of it would be unwritten",
                part.name, total[i], needed, shape_text(part.global_shape)));
    }
}

// ---------------------------------------------------------------- the parallel file

// ROMIO hints: striping only takes effect when the file is created (Lustre), collective
// buffering so that a few aggregators write large stripe-aligned pieces.
h5::PropertyList parallel_access_props(const LayoutOptions& options, MPI_Comm comm) {
    h5::PropertyList fapl = h5::file_access_props();  // file locking off
    MpiInfo hints;
    if (options.stripe_count > 0) hints.set("striping_factor", std::to_string(options.stripe_count));
    if (options.stripe_size > 0) hints.set("striping_unit", std::to_string(options.stripe_size));
    hints.set("romio_cb_write", "enable");
    // HDF5 duplicates both the communicator and the hints.
    TRAINRT_H5(H5Pset_fapl_mpio(fapl.get(), comm, hints.get()), "MPI-IO driver");
    if (options.alignment > 0)
        TRAINRT_H5(H5Pset_alignment(fapl.get(), options.alignment, options.alignment),
                   "alignment");
    TRAINRT_H5(H5Pset_all_coll_metadata_ops(fapl.get(), true), "collective metadata reads");
    TRAINRT_H5(H5Pset_coll_metadata_write(fapl.get(), true), "collective metadata writes");
    return fapl;
}

// Contiguous, allocated at creation (parallel HDF5 requires it), never pre-filled: every
// element is written by the collective transfer that follows.
h5::PropertyList dataset_create_props() {
    h5::PropertyList dcpl(TRAINRT_H5(H5Pcreate(H5P_DATASET_CREATE), "dataset properties"));
    TRAINRT_H5(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "contiguous layout");
    TRAINRT_H5(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "early allocation");
    TRAINRT_H5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "no fill");
    return dcpl;
}

h5::PropertyList collective_transfer_props() {
    h5::PropertyList dxpl(TRAINRT_H5(H5Pcreate(H5P_DATASET_XFER), "transfer properties"));
    TRAINRT_H5(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "collective transfer");
    return dxpl;
}

// An empty shape is a scalar.
h5::Dataspace make_space(const Shape& shape, const std::string& what) {
    if (shape.empty())
        return h5::Dataspace(TRAINRT_H5(H5Screate(H5S_SCALAR), what));
    std::vector<hsize_t> dims = to_hsize(shape);
    return h5::Dataspace(
        TRAINRT_H5(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), what));
}

h5::Dataset create_tensor_dataset(hid_t group, const TensorPart& part, hid_t dcpl) {
    h5::Dataspace space = make_space(part.global_shape, part.name);
    h5::Dataset dataset(TRAINRT_H5(H5Dcreate2(group, part.name.c_str(), file_type(part.type),
                                              space.get(), H5P_DEFAULT, dcpl, H5P_DEFAULT),
                                   dataset_path(part.name)));
    h5::write_attribute(dataset.get(), "replicated", std::int64_t{part.replicated ? 1 : 0});
    write_shape_attribute(dataset.get(), "global_shape", part.global_shape);
    return dataset;
}

struct Selection {
    h5::Dataspace memory;
    h5::Dataspace file;
};

// What this rank transfers: its block, or nothing (a replicated tensor off rank 0, an empty
// block). Both spaces select the same number of elements, as H5Dwrite requires.
Selection select_block(hid_t dataset, const TensorPart& part, bool writes) {
    h5::Dataspace file = h5::dataset_space(dataset);
    if (!writes || element_count(part.shape) == 0) {
        h5::Dataspace memory = make_space({}, part.name);
        TRAINRT_H5(H5Sselect_none(file.get()), part.name);
        TRAINRT_H5(H5Sselect_none(memory.get()), part.name);
        return {std::move(memory), std::move(file)};
    }
    if (!part.global_shape.empty()) {
        std::vector<hsize_t> start = to_hsize(part.offset), count = to_hsize(part.shape);
        TRAINRT_H5(H5Sselect_hyperslab(file.get(), H5S_SELECT_SET, start.data(), nullptr,
                                       count.data(), nullptr),
                   part.name);
    }
    return {make_space(part.shape, part.name), std::move(file)};
}

// Collective: one dataset per tensor, in name order, with its attributes.
std::vector<h5::Dataset> create_datasets(hid_t group, const Parts& parts) {
    h5::PropertyList dcpl = dataset_create_props();
    std::vector<h5::Dataset> datasets;
    for (const TensorPart* part : parts)
        datasets.push_back(create_tensor_dataset(group, *part, dcpl.get()));
    return datasets;
}

// Collective: every rank calls it for every tensor, in the same order. A tensor with no
// elements has no storage to write (collective MPI-IO fails on it); the global shape is agreed,
// so every rank skips the same transfers.
void write_tensor(hid_t dataset, const TensorPart& part, int rank, hid_t dxpl) {
    if (element_count(part.global_shape) == 0) return;
    Selection selection = select_block(dataset, part, !part.replicated || rank == 0);
    static const unsigned char nothing = 0;  // H5Dwrite wants a buffer even for no elements
    const void* data = part.data != nullptr ? part.data : &nothing;
    TRAINRT_H5(H5Dwrite(dataset, memory_type(part.type), selection.memory.get(),
                        selection.file.get(), dxpl, data),
               dataset_path(part.name));
}

void write_root_attributes(hid_t file, int world_size) {
    h5::write_attribute(file, "format", std::string(kDataFormat));
    h5::write_attribute(file, "format_version", kDataFormatVersion);
    h5::write_attribute(file, "layout", std::string("shared"));
    h5::write_attribute(file, "world_size", std::int64_t{world_size});
}

// Collective: attributes, one dataset per tensor, then the data. Every HDF5 object it opens is
// closed when it returns, before the file (MPI-IO files close "semi": not with objects open).
void write_contents(hid_t file, const Parts& parts, MPI_Comm comm) {
    write_root_attributes(file, comm_size(comm));
    h5::Group group = h5::create_group(file, "tensors");
    const std::vector<h5::Dataset> datasets = create_datasets(group.get(), parts);
    // All metadata reaches the file before any data: a data write that then fails (disk full)
    // leaves nothing dirty, so HDF5 can still close the file at shutdown.
    TRAINRT_H5(H5Fflush(file, H5F_SCOPE_GLOBAL), "metadata of data.h5");
    h5::PropertyList dxpl = collective_transfer_props();
    const int rank = comm_rank(comm);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i == parts.size() / 2) fault_point("mid_data", rank);
        write_tensor(datasets[i].get(), *parts[i], rank, dxpl.get());
    }
}

// Collective: creates `path` (truncating), writes every tensor and closes it; or, when any
// rank failed, abandons the file on every rank and throws on every rank.
void write_data_file(const std::string& path, const Parts& parts, const LayoutOptions& options,
                     MPI_Comm comm) {
    h5::PropertyList fapl = parallel_access_props(options, comm);
    ParallelFile file;
    std::exception_ptr failure = attempt([&] { file.create(path, fapl.get()); });
    std::vector<int> failed = failed_ranks(failure, comm);
    if (failed.empty()) {
        failure = attempt([&] { write_contents(file.get(), parts, comm); });
        failed = failed_ranks(failure, comm);
    }
    if (!failed.empty()) file.abandon();  // on every rank: its close would be collective
    throw_if_failed(failure, failed, "writing " + path);
    file.close(path);
    fault_point("after_data", comm_rank(comm));  // written, not yet fsynced
}

// Rank 0 owns data.h5 in the manifest: its size and checksum, and one part per tensor that
// covers the whole global shape.
RankWrite root_result(const std::string& dir, const Parts& parts) {
    RankWrite result;
    result.files.push_back(describe_file(dir, kDataFile));
    for (const TensorPart* part : parts)
        result.parts.emplace_back(
            part->name, PartEntry{kDataFile, dataset_path(part->name),
                                  Shape(part->global_shape.size(), 0), part->global_shape});
    return result;
}

// Collective. Rank 0 reads data.h5 back only after every rank has agreed that its part is
// durable; the other ranks return empty lists (the commit gathers RankWrites to rank 0).
RankWrite collect_result(const std::string& dir, const Parts& parts, MPI_Comm comm) {
    RankWrite result;
    std::exception_ptr failure;
    if (comm_rank(comm) == 0) failure = attempt([&] { result = root_result(dir, parts); });
    agree_or_rethrow(failure, comm, fmt::format("describing {}/{}", dir, kDataFile));
    return result;
}

class SharedFileWriter final : public LayoutWriter {
public:
    explicit SharedFileWriter(LayoutOptions options)
        : options_(std::move(options)), comm_(MPI_COMM_WORLD) {}
    std::string name() const override { return "shared"; }
    RankWrite write(const CheckpointState& state, const std::string& dir,
                    const Context& context) override;

private:
    LayoutOptions options_;
    comm::MpiComm comm_;  // this writer's own collectives and MPI-IO never mix with others'
};

RankWrite SharedFileWriter::write(const CheckpointState& state, const std::string& dir,
                                  const Context& /*context: the communicator says who we are*/) {
    const Parts parts = sorted_parts(state);
    agree_on_tensors(parts, comm_.get());
    check_coverage(parts, comm_.get());
    const std::string path = dir + "/" + kDataFile;
    const std::exception_ptr failure = attempt([&] {
        write_data_file(path, parts, options_, comm_.get());
        storage::fsync_path(path);  // after our own close: flushes the pages this rank wrote
    });
    agree_or_rethrow(failure, comm_.get(), "writing " + path);  // also: all data is durable
    return collect_result(dir, parts, comm_.get());
}

}  // namespace

std::unique_ptr<LayoutWriter> make_shared_file_writer(const LayoutOptions& options) {
    return std::make_unique<SharedFileWriter>(options);
}

}  // namespace trainrt::checkpoint
