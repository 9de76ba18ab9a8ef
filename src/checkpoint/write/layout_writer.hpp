#pragma once
// How a rank's tensors become files inside a pending checkpoint directory: the writer of each
// layout (format/layout.hpp): file_per_rank.cpp, shared_file.cpp.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/format/layout.hpp"
#include "checkpoint/format/manifest.hpp"
#include "checkpoint/write/write_plan.hpp"
#include "trainrt/context.hpp"

namespace trainrt::checkpoint {

// What one rank wrote: the files it owns (size and checksum) and its tensor parts.
struct RankWrite {
    std::vector<FileEntry> files;
    std::vector<std::pair<std::string, PartEntry>> parts;  // tensor name -> stored block
};

// Settings from [checkpoint]: layout and the striping/alignment hints for parallel HDF5.
struct LayoutOptions {
    std::string layout = "file_per_rank";
    std::uint64_t alignment = 1 << 20;   // bytes; H5Pset_alignment for datasets >= this size
    int stripe_count = 0;                // ROMIO striping_factor hint (0: leave to the filesystem)
    std::uint64_t stripe_size = 0;       // ROMIO striping_unit hint (0: leave to the filesystem)
};

class LayoutWriter {
public:
    virtual ~LayoutWriter() = default;
    virtual std::string name() const = 0;
    // Writes this rank's blocks of `plan` into `dir` (which exists on every rank) and fsyncs the
    // files it owns. The plan's state has passed validate_state (format/validate.hpp) on every rank.
    // Collective for the shared layout. Throws on failure (StorageError, H5Error,
    // CheckpointError) without blocking other ranks forever: the shared layout reports failures
    // through the collective result of its close.
    virtual RankWrite write(const WritePlan& plan, const std::string& dir, const Context& context) = 0;
};

std::unique_ptr<LayoutWriter> make_file_per_rank_writer(const LayoutOptions& options);
// Duplicates MPI_COMM_WORLD for its collective parallel-HDF5 writes.
std::unique_ptr<LayoutWriter> make_shared_file_writer(const LayoutOptions& options);

}  // namespace trainrt::checkpoint
