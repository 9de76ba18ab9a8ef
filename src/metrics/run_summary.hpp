#pragma once
// What a run directory's own files say about its run: run.json, events.jsonl, result.jsonl and
// result.superseded.jsonl, read as they are (a copy of the directory elsewhere works the same, and
// so does a directory the job is still appending to: a torn line is skipped and counted). This is
// the status, error, restarts and times that `trainrt results` reports; checkpoints are elsewhere.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metrics/attempt_times.hpp"
#include "metrics/rows_file.hpp"
#include "runlog/history.hpp"

namespace trainrt::metrics {

struct RunRecords {
    nlohmann::ordered_json run;        // run.json; null when absent or not a JSON object
    runlog::History history;           // events.jsonl, folded into attempts
    std::vector<Row> rows;             // result.jsonl, file order
    std::vector<Row> superseded;       // result.superseded.jsonl (only its times are used)
    std::vector<std::string> warnings; // torn lines, an unreadable run.json: one line each
};

// Reads the four files (each may be absent). StorageError when one exists but cannot be read.
RunRecords read_run_records(const std::string& run_dir);

enum class RunStatus { finished, stopped, failed, running };
const char* status_name(RunStatus status);

struct StatusVerdict {
    RunStatus status = RunStatus::running;
    std::string detail;  // one line: how the last attempt ended, or that it runs
    // The exit code the run's last attempt ended with (docs/reference/exit-codes.md): 0 finished, 9
    // stopped, a failure's own code (7 for a training function's error), 10 after giving up;
    // nullopt while it runs or when the record does not say.
    std::optional<int> exit_code;
};

// The last lifecycle record (start, stop, failure, finish; requeue and relaunch only annotate the
// record before them) decides: finish -> finished; failure -> failed (final or not: a non-final
// one with no later start means the job ended or is being relaunched); stop -> stopped; start ->
// running. No lifecycle record at all -> running.
StatusVerdict run_status(const runlog::History& history);

// Null unless the last lifecycle record is a failure. Otherwise, of the failure records after the
// last start, the first one naming a rank (the root cause), else the first one:
// {rank (null when the record names none), message, reason, time, exit_code (when recorded)}.
nlohmann::ordered_json run_error(const runlog::History& history);

// One entry per start after the first, oldest first: {attempt (1-based), time, reason,
// restart_count (Slurm's), job_id, world_size, resumed_from: null or {checkpoint, iteration}}.
nlohmann::ordered_json run_restarts(const runlog::History& history);

// `workload` or `world_size` of the latest start record that has it; null when none.
nlohmann::ordered_json latest_start_value(const runlog::History& history, const char* key);

struct RunTimes {
    double total_s = 0;   // the attempts' wall time (metrics/attempt_times.hpp)
    double useful_s = 0;  // sum of _time_this_iter_s over result.jsonl
    int attempts = 0;     // start records
};

// `attempts`: timed_attempts() of the same records.
RunTimes run_times(const RunRecords& records, const std::vector<TimedAttempt>& attempts);

}  // namespace trainrt::metrics
