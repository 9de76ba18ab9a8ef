#include "checkpoint/clone.hpp"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "checkpoint/format/catalog.hpp"
#include "checkpoint/format/manifest.hpp"
#include "checkpoint/read/verify.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

namespace fs = std::filesystem;

namespace trainrt::checkpoint {

void clone_checkpoint(const std::string& from_run, const std::string& name, const std::string& to_run) {
    const std::string source = checkpoints_dir(from_run) + "/" + name;
    if (const std::string problem = verify(source); !problem.empty())
        throw CheckpointError(fmt::format("checkpoint: {} does not verify: {}", source, problem));
    const std::int64_t iteration = read_manifest(source).iteration;
    const std::string dir = checkpoints_dir(to_run);
    storage::make_dirs(dir);
    for (const std::string& own : committed_names(to_run))
        if (read_manifest(dir + "/" + own).iteration >= iteration) fs::remove_all(retire_checkpoint(to_run, own));
    const std::string pending = dir + "/" + runlog::kPendingPrefix + name;
    fs::remove_all(pending);
    std::error_code error;
    fs::copy(source, pending, fs::copy_options::recursive, error);
    if (error) throw StorageError(fmt::format("storage: copying {} to {} failed: {}", source, pending, error.message()));
    Manifest copy = read_manifest(pending);
    copy.copied_from = source;
    storage::write_file_atomic(pending + "/" + kManifestFile, to_json(copy).dump(2) + "\n");
    for (const auto& entry : fs::directory_iterator(pending)) storage::fsync_path(entry.path().string());
    storage::fsync_path(pending);
    storage::rename_durable(pending, dir + "/" + name);
    write_latest(to_run, name);
}

}  // namespace trainrt::checkpoint
