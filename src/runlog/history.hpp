#pragma once
// The one fold of the run record into attempts (one attempt = one start record, until the next
// start) and the failure budget. The failure budget ([failure] max_failures), `trainrt results`
// and `trainrt plot` all read the run's history through this. Pure: unit-tested on event lists.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "runlog/events.hpp"

namespace trainrt::runlog {

struct Attempt {
    std::size_t start = 0;               // index of its start record in History::events
    std::optional<std::size_t> restore;  // its restore record, when it resumed from a checkpoint
    // Its start time and the time of its last own record (one its ranks wrote: not a relaunch,
    // nor a failure written on its behalf later without a rank); nullopt when the start has none.
    std::optional<double> begin, end;
};

struct History {
    std::vector<Event> events;
    std::vector<Attempt> attempts;

    // Failures count since the last finish or final failure, across requeues and relaunches;
    // several records of one failed attempt count once, and an attempt that was still open when
    // the next one started counts as failed (it ended without a record).
    int failures = 0;
    // Step launches that failed before trainrt started (srun could not create the step, a node
    // could not start the program), since the last start: retried with back-off on their own
    // budget ([failure] max_launch_failures), not counted in `failures`.
    int launch_failures = 0;
    // Every failed attempt the record holds, never reset: what the run learned of its own
    // failure rate ([failure] mtbf = 0 with checkpoint.interval = auto).
    int failures_recorded = 0;
    bool open = false;             // the latest attempt started and has no end record
    std::string last_end;          // "stop (time_limit)", "failure: <message>", "finish", "" when none
    std::string last_attempt_job;  // job id of the latest start (cleared by a finish)
    int last_attempt_restart = 0;

    // The last lifecycle record (start, stop, failure or finish); nullopt when none.
    std::optional<std::size_t> last_lifecycle;

    const Event& event(std::size_t index) const { return events[index]; }
};

History fold(std::vector<Event> events);

// Seconds the attempts ran, each from its start to its last own record.
double attempts_seconds(const History& history);

// The latest record of kind T at or after `from`, or the first one when `first` is true; null
// when none.
template <class T>
const Event* find_after(const History& history, std::size_t from, bool first = true) {
    const Event* found = nullptr;
    for (std::size_t i = from; i < history.events.size(); ++i)
        if (history.events[i].as<T>() != nullptr) {
            found = &history.events[i];
            if (first) break;
        }
    return found;
}

}  // namespace trainrt::runlog
