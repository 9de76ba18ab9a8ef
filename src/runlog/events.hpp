#pragma once
// The run record, events.jsonl: one JSON object per line, appended by rank 0 (or the relaunch
// wrapper, `trainrt after-step`), read by the failure budget, `trainrt results` and `trainrt plot`.
// Schema: hdf5_schemas/events.md. Every line carries the common fields (event, time, job_id,
// restart_count, world_size) and the fields of its kind below.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainrt/context.hpp"

namespace trainrt::runlog {

struct StartEvent {  // an attempt began (every rank agreed to start)
    std::vector<std::string> hosts;
    std::string launcher, workload;
    std::string reason;    // "first start", "after stop (time_limit)", ...
    std::string last_end;  // how the previous attempt ended ("" when none)
    int failures = 0;      // counted against max_failures when it began
    int max_failures = 0;
    // When rank 0's process was created (runlog::process_start_seconds): the time before the
    // start record (loader, MPI, Python, the job's set-up) is start-up. nullopt when unknown.
    std::optional<double> launched;
};
struct CheckpointEvent {  // a checkpoint was committed
    std::string checkpoint;
    std::int64_t iteration = 0;
    std::int64_t rank0_bytes = 0;
    double stall_s = 0;
    bool async = false;
};
struct RestoreEvent {  // the attempt resumed from a checkpoint
    std::string checkpoint;  // its path when it was read
    std::int64_t iteration = 0;
    int written_by_ranks = 0;
    std::int64_t superseded_rows = 0;
    std::optional<std::string> copied_from;  // the checkpoint it is a copy of (a sweep's PBT exploit)
    std::optional<std::string> level;        // pfs, local or partner (checkpoint.levels)
};
struct StopEvent {  // stopped on request, the stop checkpoint committed
    std::string reason;  // signal, time_limit
    std::int64_t step = 0;
    std::optional<std::string> checkpoint;  // none when no new one was needed
    std::int64_t boundary = 0;
    std::vector<std::int64_t> boundaries_by_rank;
    double request_to_commit_s = 0;
    std::optional<std::string> signal;  // "USR2" when reason = signal
    std::optional<int> signal_rank;
};
// The exit code a run that stopped so ends with: Ctrl-C (signal INT) exit_codes::interrupted, not
// requeued; any other stop exit_codes::stopped.
int stop_exit_code(const StopEvent& stop);

struct RequeueEvent {  // the job was requeued after a stop
    std::string by;  // trainrt, slurm
    std::int64_t step = 0;
    std::string reason;
};
struct RelaunchEvent {  // the wrapper relaunches the step in the allocation
    int failures = 0;
    int max_failures = 0;
    int exit_code = 0;
    std::vector<std::string> excluded_nodes;
    std::string reason;
    std::string took_over_from;  // the batch host, when a watcher on another node relaunches for it
};
struct FailureEvent {
    std::optional<int> rank;  // the rank that failed, when one did
    std::string message;
    std::string reason;  // the error domain, collective_timeout, unrecorded_end, launch, max_failures
    std::optional<int> exit_code;
    std::string phase;            // after-step's: "run" or "launch"
    bool final = false;           // gave up: ends the failure series
    std::optional<int> failures;  // with final: how many were counted
};
struct FinishEvent {  // the training function returned: the run is done
    std::int64_t iterations = 0;
};

using EventBody = std::variant<StartEvent, CheckpointEvent, RestoreEvent, StopEvent, RequeueEvent, RelaunchEvent,
                               FailureEvent, FinishEvent>;

struct Event {
    std::optional<double> time;  // seconds since the epoch (clock.hpp); absent when not written
    std::string time_text;       // as written
    std::string job_id;          // "" outside Slurm
    int restart_count = 0;
    std::optional<int> world_size;
    EventBody body;

    const char* kind() const;  // "start", "checkpoint", ...
    template <class T> const T* as() const { return std::get_if<T>(&body); }
};

// Appends one event with the common fields of `context` and the current time. StorageError when
// the line cannot be written.
void append(const std::string& run_dir, const Context& context, const EventBody& body);

// The line append() writes (without its newline), at `time`.
nlohmann::ordered_json to_json(const EventBody& body, const Context& context, double time);

struct EventLog {
    std::vector<Event> events;          // file order
    std::vector<std::string> warnings;  // one line per record or field skipped
};

// Tolerant: a torn line (a crash mid-append, or read while written), a line that is not an
// object, an unknown event kind or a common field of the wrong type skips that line; a kind's
// field of the wrong type is read as absent. Each skip adds one warning. An absent file is an
// empty log; StorageError when it exists but cannot be read.
EventLog read_events(const std::string& run_dir);
EventLog parse_events(const std::vector<nlohmann::json>& lines);

// The records appended to a run's events.jsonl since the last look, for a watcher that must not
// re-read a long history every second (the supervisor during a step). Starts at the file's end
// as it is when constructed; a line still being written waits for its newline. Never throws: an
// unreadable file has nothing new.
class EventTail {
public:
    explicit EventTail(std::string run_dir);
    std::vector<Event> read_new();

private:
    std::string path_;
    std::uint64_t offset_ = 0;
};

}  // namespace trainrt::runlog
