#pragma once
// The run directory's file names (docs/concepts.md): the one place that spells them.
#include <string>

namespace trainrt::runlog {

inline constexpr const char* kRunJson = "run.json";                     // config snapshot
inline constexpr const char* kEvents = "events.jsonl";                  // the run record (events.hpp)
inline constexpr const char* kResults = "result.jsonl";                 // one row per report
inline constexpr const char* kSupersededResults = "result.superseded.jsonl";  // rows a resume set aside
inline constexpr const char* kProgressCsv = "progress.csv";
inline constexpr const char* kMetricsH5 = "metrics.h5";
inline constexpr const char* kCheckpointsDir = "checkpoints";
inline constexpr const char* kHeartbeatsDir = "heartbeats";           // one file per node (heartbeats.hpp)
inline constexpr const char* kDecisionsDir = "decisions";             // a sweep's verdicts (scheduler_pause.hpp)
inline constexpr const char* kSweepRecord = "sweep.json";             // a sweep directory's record (sweep_record.hpp)
inline constexpr const char* kTrackingState = "tracking.json";       // what was sent to trackers (cli/tracking_plan.hpp)
inline constexpr const char* kDatasets = "datasets.h5";  // a Trainer's datasets= (Ray Data), rewritten at each start
inline constexpr const char* kCallbackDir = "callback";  // a Tune driver's callbacks and a running trial's results

// Inside kCheckpointsDir (and a node-local level's directory): committed checkpoints are
// kCheckpointPrefix + the iteration in six or more digits, each holding kManifestFile, written last;
// a save in progress is kPendingPrefix + its name, one being removed kDeletingPrefix + its name.
inline constexpr const char* kCheckpointPrefix = "checkpoint_";
inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kPendingPrefix = ".pending_";
inline constexpr const char* kDeletingPrefix = ".deleting_";
inline constexpr const char* kLatestCheckpoint = "latest";  // the newest committed name, a convenience

// `run_dir`/`name`.
inline std::string path_in(const std::string& run_dir, const char* name) { return run_dir + "/" + name; }

// The sweep's verdict on a trial at pause point `point` ([stop] pause_at): a file holding
// "continue" or "stop", written whole (renamed into place).
inline std::string decision_path(const std::string& run_dir, long long point) {
    return path_in(run_dir, kDecisionsDir) + "/" + std::to_string(point);
}
inline constexpr const char* kVerdictContinue = "continue";
inline constexpr const char* kVerdictStop = "stop";

// A class Trainable's result at `iteration` that the Tune driver's callbacks see before the trial
// reports it (JSON), and their answer, "checkpoint" (a callback set result["should_checkpoint"])
// or "continue"; each written whole (renamed into place).
inline std::string callback_result_path(const std::string& run_dir, long long iteration) {
    return path_in(run_dir, kCallbackDir) + "/" + std::to_string(iteration) + ".json";
}
inline std::string callback_verdict_path(const std::string& run_dir, long long iteration) {
    return path_in(run_dir, kCallbackDir) + "/" + std::to_string(iteration) + ".verdict";
}
inline constexpr const char* kVerdictCheckpoint = "checkpoint";

}  // namespace trainrt::runlog
