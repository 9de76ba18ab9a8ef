#pragma once
// A checkpoint of one run made the newest of another (a sweep's PBT exploit), beside the
// catalog of a run's checkpoints (format/catalog.hpp) and their verification (read/verify.hpp).
#include <string>

namespace trainrt::checkpoint {

// Copies committed checkpoint `name` of run `from_run` (verified first) into run `to_run` as its
// newest, which the run resumes from (PBT's exploit): `to_run`'s checkpoints of that iteration or
// later are retired and removed first; the copy goes in through .pending_ and a durable rename.
// CheckpointError when the source does not verify; StorageError when copying fails.
void clone_checkpoint(const std::string& from_run, const std::string& name, const std::string& to_run);

}  // namespace trainrt::checkpoint
