#include "checkpoint/read/open_path.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/manifest.hpp"
#include "checkpoint/read/reader.hpp"
#include "checkpoint/read/verify.hpp"
#include "trainrt/error.hpp"

namespace trainrt::checkpoint {

namespace {

namespace fs = std::filesystem;

Checkpoint open_run_dir(const std::string& run_dir) {
    const Selection selection = select_latest_valid(run_dir);
    if (!selection.path) {
        std::string why = selection.warnings.empty() ? "it has no committed checkpoint"
                                                     : selection.warnings.back();
        throw CheckpointError(fmt::format("checkpoint: {} holds no valid checkpoint ({})", run_dir, why));
    }
    return open_checkpoint(*selection.path);
}

}  // namespace

Checkpoint open_verified(const std::string& path) {
    if (!fs::is_directory(path))
        throw CheckpointError(fmt::format("checkpoint: {} is not a directory: give a run directory or one of its "
                                          "checkpoints/checkpoint_NNNNNN", path));
    if (fs::is_directory(checkpoints_dir(path))) return open_run_dir(path);
    if (!fs::exists(fs::path(path) / kManifestFile))
        throw CheckpointError(fmt::format("checkpoint: {} is neither a run directory (no checkpoints/) nor a "
                                          "checkpoint (no {})", path, kManifestFile));
    const std::string problem = verify(path);
    if (!problem.empty()) throw CheckpointError(fmt::format("checkpoint: {} does not verify: {}", path, problem));
    return open_checkpoint(path);
}

}  // namespace trainrt::checkpoint
