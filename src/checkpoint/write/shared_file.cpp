// The "shared" checkpoint layout: every rank writes its blocks into one data.h5 in the pending
// checkpoint directory through parallel HDF5 (MPI-IO driver, collective transfers).
//
// Order of a write, every step collective:
//   1. agree that all ranks describe the same tensors and that every block is valid; a mismatch
//      or a bad block is a CheckpointError on every rank, before anything is created;
//   2. create data.h5, its attributes and one contiguous dataset per tensor (global shape),
//      and flush that metadata;
//   3. each rank writes its blocks (independent H5Dwrite): sharded tensors its block, replicated
//      tensors the blocks of write_plan.hpp;
//   4. agree, then close (after any rank's failure: leave the file for HDF5's shutdown), then
//      every rank fsyncs the file (a Lustre client flushes only its own pages) and hashes its
//      ranges of it (ranges_of_writers: the bytes it wrote; the manifest holds one checksum per
//      range, naming its writer);
//   5. agree on the outcome: every rank returns, or every rank throws.
// Tensors are created and written in name order, so all ranks issue the same collectives.
// A failure inside a collective HDF5 call is reported by HDF5/ROMIO on every rank taking part;
// the data transfers are independent (disjoint blocks), and the agreements keep a rank that
// failed alone from leaving the others waiting.
#include <fcntl.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/validate.hpp"
#include "checkpoint/write/fault.hpp"
#include "checkpoint/write/layout_writer.hpp"
#include "checkpoint/write/slab_write.hpp"
#include "comm/agreement.hpp"
#include "comm/mpi_check.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/strings.hpp"
#include "h5/file.hpp"
#include "h5/h5.hpp"
#include "h5/io.hpp"
#include "h5/props.hpp"
#include "h5/space.hpp"
#include "storage/page_coherence.hpp"
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
    void create(const std::string& path, hid_t fapl) { file_ = h5::create_file_with(path, fapl); }
    void close(const std::string& path) { h5::close_file_once(file_, path); }
    void abandon() { file_.release(); }

private:
    h5::File file_;  // closed on destruction unless closed or abandoned
};

std::vector<hsize_t> to_hsize(const Shape& shape) { return {shape.begin(), shape.end()}; }


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

// ---------------------------------------------------------------- the parallel file

// ROMIO hints: striping only takes effect when the file is created (Lustre), collective
// buffering for the collective metadata writes (two-phase I/O reports a failure on every rank).
h5::PropertyList parallel_access_props(const LayoutOptions& options, MPI_Comm comm) {
    MpiInfo hints;
    if (options.stripe_count > 0) hints.set("striping_factor", std::to_string(options.stripe_count));
    if (options.stripe_size > 0) hints.set("striping_unit", std::to_string(options.stripe_size));
    hints.set("romio_cb_write", "enable");
    // A block that is not contiguous in the file (a tensor split along a later dimension) is
    // written piece by piece, not by data sieving's read-modify-write of the span under a file
    // lock (locks that parallel filesystems often do not honour).
    hints.set("romio_ds_write", "disable");
    return h5::mpi_file_access({comm, hints.get(), options.alignment, true});  // HDF5 copies the hints
}

// Contiguous, allocated at creation (parallel HDF5 requires it), never pre-filled: every
// element is written by the collective transfer that follows.
h5::PropertyList dataset_create_props() {
    h5::DatasetLayout layout;
    layout.allocate_early = true;
    layout.never_fill = true;
    return h5::dataset_create_props(layout, "contiguous, early allocation, no fill");
}

// Data transfers are independent: the ranks' blocks of a tensor are disjoint row ranges, so each
// rank writes its block straight from its memory. Collective (two-phase) transfers copied every
// byte through 16 MiB aggregator buffers first: 0.3-0.4x a plain write on one node.
h5::PropertyList independent_transfer_props() { return h5::independent_transfer(); }

// An empty shape is a scalar.
h5::Dataspace make_space(const Shape& shape, const std::string& what) {
    if (shape.empty()) return h5::scalar_space(what);
    return h5::simple_space(to_hsize(shape), what);
}

h5::Dataset create_tensor_dataset(hid_t group, const TensorPart& part, hid_t dcpl) {
    h5::Dataspace space = make_space(part.global_shape, part.name);
    h5::Dataset dataset =
        h5::create_dataset(group, part.name, file_type(part.type), space.get(), dcpl, dataset_path(part.name));
    h5::write_attribute(dataset.get(), "replicated", std::int64_t{part.replicated ? 1 : 0});
    write_shape_attribute(dataset.get(), "global_shape", part.global_shape);
    return dataset;
}

// Collective: one dataset per tensor, in name order, with its attributes.
std::vector<h5::Dataset> create_datasets(hid_t group, const Parts& parts) {
    h5::PropertyList dcpl = dataset_create_props();
    std::vector<h5::Dataset> datasets;
    for (const TensorPart* part : parts)
        datasets.push_back(create_tensor_dataset(group, *part, dcpl.get()));
    return datasets;
}

// Not collective (independent transfer): this rank's block of the tensor, slab by slab
// (slab_write.hpp). A block with no elements has nothing to write. Returns where its bytes lie in
// the file when they are there as in memory.
std::optional<WrittenRegion> write_tensor(hid_t dataset, const TensorPart& part, bool writes, hid_t dxpl,
                                          storage::WritebackWindow& writeback, storage::DirectWriter& direct,
                                          const std::string& path) {
    if (!writes) return std::nullopt;
    return write_in_slabs(part, SlabTarget{dataset, part.offset, dxpl, &writeback, &direct, path});
}

void write_root_attributes(hid_t file, int world_size) {
    h5::write_attribute(file, "format", std::string(kDataFormat));
    h5::write_attribute(file, "format_version", kDataFormatVersion);
    h5::write_attribute(file, "layout", std::string("shared"));
    h5::write_attribute(file, "world_size", std::int64_t{world_size});
}

// Collective: attributes, one dataset per tensor and their metadata flushed; then each rank's
// data, independently (a rank that fails stops there; write_data_file's agreement tells the
// others). A block that lies in the file as in memory (split along the first dimension) is
// written by this rank's own DirectWriter, not MPI-IO: the datasets' places are allocated at
// creation and the blocks' bytes are disjoint, so only their partial 4 KiB blocks, written
// through the page cache, may share a page with another rank's bytes or HDF5's metadata. Every
// HDF5 object it opens is closed when it returns, before the file (MPI-IO files close "semi": not
// with objects open). Returns where this rank's blocks lie in the file.
std::vector<WrittenRegion> write_contents(hid_t file, const WritePlan& plan, MPI_Comm comm, const std::string& path) {
    Parts parts;
    for (const TensorPart& block : plan.blocks) parts.push_back(&block);
    write_root_attributes(file, comm_size(comm));
    h5::Group group = h5::create_group(file, "tensors");
    const std::vector<h5::Dataset> datasets = create_datasets(group.get(), parts);
    // All metadata reaches the file before any data: a data write that then fails (disk full)
    // leaves nothing dirty, so HDF5 can still close the file at shutdown.
    h5::flush(file, H5F_SCOPE_GLOBAL, "metadata of data.h5");
    h5::PropertyList dxpl = independent_transfer_props();
    const int rank = comm_rank(comm);
    const storage::Fd writeback_fd = storage::open_or_throw(path, O_RDONLY);
    storage::WritebackWindow writeback(writeback_fd.get(), path, kSlabBytes);
    storage::DirectWriter direct(path);
    std::vector<WrittenRegion> regions;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i == parts.size() / 2) fault_point("mid_data", rank);
        if (auto region = write_tensor(datasets[i].get(), *parts[i], plan.writes[i], dxpl.get(), writeback, direct, path))
            regions.push_back(*region);
    }
    direct.finish();
    return regions;
}

// ROMIO's collective open looks the file up on every rank (statfs of its path) before rank 0
// creates it. A client that caches negative lookups (NFS's lookupcache=all, a FUSE negative
// timeout) then answers "no such file" to the same rank's open that follows: on GlusterFS with a
// negative-timeout, every `shared` save failed (tests/checkpoint/test_glusterfs.sh). So where the filesystem is
// not known to keep clients coherent (storage/page_coherence.hpp) rank 0 creates the file empty
// first, and every rank's first lookup finds it. Not on the others: on Lustre, ROMIO sets the
// striping of the file it creates itself. The agreement after it is made on every filesystem, so
// that ranks never depend on judging the filesystem alike.
void create_before_collective_open(const std::string& path, int rank) {
    const std::string dir = std::filesystem::path(path).parent_path();
    if (rank == 0 && !storage::page_cache_coherent(dir)) storage::open_or_throw(path, O_WRONLY | O_CREAT | O_TRUNC);
}

// Collective: creates `path` (truncating), writes every tensor and closes it; or, when any
// rank failed, abandons the file on every rank and throws on every rank. Returns where this
// rank's blocks lie in the file.
std::vector<WrittenRegion> write_data_file(const std::string& path, const WritePlan& plan, const LayoutOptions& options,
                                           MPI_Comm comm, Communicator& peers) {
    h5::PropertyList fapl = parallel_access_props(options, comm);
    ParallelFile file;
    std::vector<WrittenRegion> regions;
    try {
        comm::agree(peers, comm::attempt([&] { create_before_collective_open(path, comm_rank(comm)); }),
                    "creating " + path);
        comm::agree(peers, comm::attempt([&] { file.create(path, fapl.get()); }), "creating " + path);
        comm::agree(peers, comm::attempt([&] { regions = write_contents(file.get(), plan, comm, path); }),
                    "writing " + path);
    } catch (const Error&) {
        file.abandon();  // on every rank: its close would be collective
        throw;
    }
    // The close writes the last metadata; a rank whose part of it failed fails alone.
    comm::agree(peers, comm::attempt([&] { file.close(path); }), "closing " + path);
    fault_point("after_data", comm_rank(comm));  // written, not yet fsynced
    return regions;
}

// Collective: where every rank's blocks lie in the file (what each wrote from its memory).
std::vector<WrittenSpan> gather_spans(Communicator& peers, const std::vector<WrittenRegion>& written) {
    std::string packed(written.size() * 2 * sizeof(std::uint64_t), '\0');
    for (std::size_t i = 0; i < written.size(); ++i) {
        const std::uint64_t pair[2] = {written[i].offset, written[i].length};
        std::memcpy(packed.data() + i * sizeof(pair), pair, sizeof(pair));
    }
    std::vector<WrittenSpan> spans;
    const std::vector<std::string> all = comm::allgather_strings(peers, packed);
    for (std::size_t rank = 0; rank < all.size(); ++rank)
        for (std::size_t at = 0; at + 2 * sizeof(std::uint64_t) <= all[rank].size(); at += 2 * sizeof(std::uint64_t)) {
            std::uint64_t pair[2];
            std::memcpy(pair, all[rank].data() + at, sizeof(pair));
            spans.push_back({pair[0], pair[1], static_cast<int>(rank)});
        }
    return spans;
}

// What a rank reports of data.h5: the checksums of the ranges it hashes (ranges_of_writers: its
// own blocks, so that the ranks hash the file together and none reads all of it) and, from rank
// 0, one part per tensor covering the whole global shape. The bytes it wrote (`written`) are
// hashed from its memory, the rest (HDF5's metadata, blocks stored in another type) read.
RankWrite range_result(const std::string& dir, const WritePlan& plan, int rank, int ranks,
                       const std::vector<WrittenSpan>& spans, std::vector<WrittenRegion> written) {
    RankWrite result;
    const std::uint64_t size = std::filesystem::file_size(dir + "/" + kDataFile);
    std::vector<ChecksumRange> mine;
    for (ChecksumRange& range : ranges_of_writers(size, spans, ranks))
        if (range.rank == rank) {
            range.xxh3 = describe_written_range(dir, kDataFile, range, written);
            mine.push_back(std::move(range));
        }
    if (!mine.empty() || rank == 0) result.files.push_back({kDataFile, size, "", std::move(mine)});
    if (rank != 0) return result;
    for (const TensorPart& part : plan.blocks)
        result.parts.emplace_back(
            part.name, PartEntry{kDataFile, dataset_path(part.name),
                                 Shape(part.global_shape.size(), 0), part.global_shape});
    return result;
}

class SharedFileWriter final : public LayoutWriter {
public:
    explicit SharedFileWriter(LayoutOptions options)
        : options_(std::move(options)), comm_(MPI_COMM_WORLD), peers_(comm::make_mpi_communicator(comm_.get())) {}
    std::string name() const override { return "shared"; }
    RankWrite write(const WritePlan& plan, const std::string& dir, const Context& context) override;

private:
    LayoutOptions options_;
    comm::MpiComm comm_;  // this writer's own collectives and MPI-IO never mix with others'
    std::unique_ptr<Communicator> peers_;  // agreement on each step's outcome, over comm_'s ranks
};

// Where the filesystem's clients are not coherent (storage/page_coherence.hpp), a rank reads the
// bytes other ranks wrote only once every rank's writes reached the servers: each fsyncs, all
// agree, then each describes its ranges (reading the others' bytes past its own cached pages).
// The same two agreements as the overlapped order, so every rank takes part in the same ones.
RankWrite sync_then_describe(Communicator& peers, const std::string& path, const std::function<RankWrite()>& describe) {
    comm::agree(peers, comm::attempt([&] { storage::fsync_path(path); }), "syncing " + path);
    RankWrite result;
    comm::agree(peers, comm::attempt([&] { result = describe(); }), "describing " + path);
    return result;
}

RankWrite SharedFileWriter::write(const WritePlan& plan, const std::string& dir,
                                  const Context& /*context: the communicator says who we are*/) {
    const std::string path = dir + "/" + kDataFile;  // the plan is in name order, as collectives need
    std::vector<WrittenRegion> written = write_data_file(path, plan, options_, comm_.get(), *peers_);
    const std::vector<WrittenSpan> spans = gather_spans(*peers_, written);
    if (!storage::page_cache_coherent(path))
        return sync_then_describe(*peers_, path, [&] {
            return range_result(dir, plan, peers_->rank(), peers_->size(), spans, std::move(written));
        });
    // The close was collective, so every rank's bytes are in the file: each rank hashes its range
    // of it (what it wrote from its memory, the rest from the page cache or the filesystem's
    // coherent reads) while it fsyncs the pages it wrote. The commit gathers the RankWrites to
    // rank 0, which merges the ranges into data.h5's entry; they are used only once every rank
    // agrees that both succeeded.
    std::future<RankWrite> described = std::async(std::launch::async, [&] {
        return range_result(dir, plan, peers_->rank(), peers_->size(), spans, std::move(written));
    });
    const std::exception_ptr synced = comm::attempt([&] { storage::fsync_path(path); });
    RankWrite result;
    const std::exception_ptr failure = comm::attempt([&] { result = described.get(); });
    comm::agree(*peers_, synced, "syncing " + path);
    comm::agree(*peers_, failure, fmt::format("describing {}/{}", dir, kDataFile));
    return result;
}

}  // namespace

std::unique_ptr<LayoutWriter> make_shared_file_writer(const LayoutOptions& options) {
    return std::make_unique<SharedFileWriter>(options);
}

}  // namespace trainrt::checkpoint
