#pragma once
// Slurm's client commands (squeue, scontrol), run directly (posix_spawnp, no shell) with a time
// limit. TRAINRT_SQUEUE / TRAINRT_SCONTROL name other executables (containers, tests).
#include <optional>
#include <string>
#include <vector>

namespace trainrt::launch {

struct ProgramResult {
    bool started = false;   // false: the program was not found or could not be run
    int exit_code = -1;     // -1 when killed or not started
    std::string output;     // stdout and stderr together, trailing newline removed
};

// Runs argv[0] (searched on PATH) and collects its output; kills it after `timeout_s`.
ProgramResult run_program(const std::vector<std::string>& argv, double timeout_s);

// squeue's %L: "[days-]hours:minutes:seconds", "minutes:seconds" -> seconds; nullopt for
// UNLIMITED, NOT_SET, INVALID or anything else.
std::optional<double> parse_time_left(const std::string& text);

// Seconds until the job's time limit; nullopt when unlimited or unknown (squeue failed).
std::optional<double> query_time_left(const std::string& job_id, std::string* why = nullptr);

struct SlurmJobState {
    std::string state;       // JobState, e.g. RUNNING, COMPLETING; empty when unknown
    int restarts = -1;       // Restarts
    std::string error;       // why it is unknown
};
SlurmJobState query_job_state(const std::string& job_id);

// `scontrol requeue JOB`; the result says whether it ran and what scontrol said.
ProgramResult requeue_job(const std::string& job_id);

std::string scontrol_program();

}  // namespace trainrt::launch
