#pragma once
// The checkpoints of a run directory: <run dir>/checkpoints/checkpoint_<iteration>/ (committed),
// .pending_* (a save in progress or interrupted), .deleting_* (retention in progress), and
// `latest` (the newest committed name, replaced atomically). Rank 0 alone looks at them.
// Which of them verify is read/verify.hpp's question.
#include <cstdint>
#include <string>
#include <vector>

namespace trainrt::checkpoint {

std::string checkpoints_dir(const std::string& run_dir);
std::string checkpoint_name(std::int64_t iteration);
// The iteration in a checkpoint's name (checkpoint_000042 -> 42); -1 for any other name
// (checkpoint_<digits> only: backups such as checkpoint_000006.bak are not checkpoints).
std::int64_t iteration_of_name(const std::string& name);

// Committed checkpoint directories (checkpoint_*), oldest first by iteration.
std::vector<std::string> committed_names(const std::string& run_dir);

// Removes what an interrupted save or retention left behind; returns what it removed.
std::vector<std::string> clean_leftovers(const std::string& run_dir);

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

// Takes checkpoint `name` out of the catalog: a durable rename to .deleting_<name>, so an
// interrupted removal never leaves a half checkpoint under a committed name. Returns the renamed
// path, for the caller to remove (storage::BackgroundRemover); the next start removes leftovers.
std::string retire_checkpoint(const std::string& run_dir, const std::string& name);

}  // namespace trainrt::checkpoint
