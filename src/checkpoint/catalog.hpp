#pragma once
// The checkpoints of a run directory: <run dir>/checkpoints/checkpoint_<iteration>/ (committed),
// .pending_* (a save in progress or interrupted), .deleting_* (retention in progress), and
// `latest` (the newest committed name, replaced atomically). Rank 0 alone looks at them.
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/manifest.hpp"
#include "checkpoint/schema_check.hpp"
#include "storage/file_image.hpp"

namespace trainrt::checkpoint {

std::string checkpoints_dir(const std::string& run_dir);
std::string checkpoint_name(std::int64_t iteration);
// The iteration in a checkpoint's name (checkpoint_000042 -> 42); -1 for any other name
// (checkpoint_<digits> only: backups such as checkpoint_000006.bak are not checkpoints).
std::int64_t iteration_of_name(const std::string& name);

// Committed checkpoint directories (checkpoint_*), oldest first by iteration.
std::vector<std::string> committed_names(const std::string& run_dir);

// The bytes a restoring rank keeps in memory from its verification, to read its blocks from
// (reader.hpp): the one file it wrote itself (or, alone, the first it verifies), when its share
// includes it and it fits; or, in the shared layout, the ranges of the shared file it wrote.
struct KeptImage {
    std::string file;             // "rank_00003.h5"; "": the first file verified (then its name)
    std::uint64_t max_bytes = 0;  // a larger file is verified as any other
    storage::FileImage image;     // its bytes, when kept
    // Where its parts' datasets lie in `image` (or in `ranges_file`), noted by the schema check of
    // the file (verify_schema_share), which opens them anyway: the reader needs no HDF5 open.
    DatasetAddresses addresses;
    // In the shared layout, restored by as many ranks as wrote it: the checksum ranges of the
    // shared file that this rank wrote and verified, each kept in memory within max_bytes in
    // all (its blocks are read from there). `unread`: the bytes of datasets in it not yet read.
    struct Range {
        std::uint64_t offset = 0;  // in the file
        storage::FileImage image;
        std::uint64_t unread = 0;
    };
    std::string ranges_file;
    std::vector<Range> ranges;
    std::uint64_t held_bytes() const;  // of the image and the ranges
};

// "" when the checkpoint verifies: manifest readable, every listed file present with its size
// and XXH3-64, no file that the manifest does not list, and the files hold what the manifest
// says (schema_check.hpp). Otherwise the reason, naming the file.
std::string verify(const std::string& checkpoint_dir);

// verify() in parts, for ranks that verify a checkpoint together (CheckpointManager::restore),
// each with the manifest it read (read_manifest_or_reason: "" or why it cannot be read).
// verify_share checks the presence, size and XXH3-64 of this share's checksum ranges (file k,
// numbered in the manifest's order, is share k % shares'; in the shared layout each range of the
// shared file counts as a file, and one with a writer (ChecksumRange::rank) is that rank's share
// when there are as many shares as the checkpoint's world size; share 0 also looks for files the
// manifest does not list). verify_schema_share, once every share's checksums passed
// (HDF5 never opens a corrupted file), checks the HDF5 contents (metadata only) of the files whose
// first range is this share's, and notes where the kept file's datasets lie (keep->addresses).
// Each "" or the reason, naming the file.
std::string read_manifest_or_reason(const std::string& checkpoint_dir, Manifest& manifest);
std::string verify_share(const std::string& checkpoint_dir, const Manifest& manifest, int share, int shares,
                         KeptImage* keep = nullptr);
std::string verify_schema_share(const std::string& checkpoint_dir, const Manifest& manifest, int share, int shares,
                                KeptImage* keep = nullptr);

// Removes what an interrupted save or retention left behind; returns what it removed.
std::vector<std::string> clean_leftovers(const std::string& run_dir);

struct Selection {
    std::optional<std::string> path;    // the checkpoint to resume from
    std::vector<std::string> warnings;  // one line per checkpoint skipped, naming file and reason
};

// The newest committed checkpoint that verifies; older ones are tried when newer ones fail.
Selection select_latest_valid(const std::string& run_dir);

void write_latest(const std::string& run_dir, const std::string& name);

struct RetentionPolicy {
    std::int64_t num_to_keep = 0;  // 0: keep every checkpoint
    std::string score_attribute;   // a reported metric; "" ranks by recency
    bool higher_is_better = true;  // score_order = max
};

// Checkpoints to delete after `newest` committed: all but the best num_to_keep by score, and
// never `newest` (resume needs it). Checkpoints without the score count as worst.
std::vector<std::string> retention_victims(const std::string& run_dir, const std::string& newest,
                                           const RetentionPolicy& policy);

// Copies committed checkpoint `name` of run `from_run` (verified first) into run `to_run` as its
// newest, which the run resumes from (PBT's exploit): `to_run`'s checkpoints of that iteration or
// later are retired and removed first; the copy goes in through .pending_ and a durable rename.
// CheckpointError when the source does not verify; StorageError when copying fails.
void clone_checkpoint(const std::string& from_run, const std::string& name, const std::string& to_run);

// Takes checkpoint `name` out of the catalog: a durable rename to .deleting_<name>, so an
// interrupted removal never leaves a half checkpoint under a committed name. Returns the renamed
// path, for the caller to remove (storage::BackgroundRemover); the next start removes leftovers.
std::string retire_checkpoint(const std::string& run_dir, const std::string& name);

}  // namespace trainrt::checkpoint
