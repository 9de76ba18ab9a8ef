#pragma once
// Which collective this process is blocked in, and since when: set around every blocking wait of
// the MPI communicator so the runtime's watchdog can name a hung collective. Lock-free; one
// collective at a time (MPI is used from one thread at a time).
#include <optional>
#include <string>

namespace trainrt::comm {

class CollectiveScope {
public:
    explicit CollectiveScope(const char* name) noexcept;
    ~CollectiveScope();
    CollectiveScope(const CollectiveScope&) = delete;
    CollectiveScope& operator=(const CollectiveScope&) = delete;

private:
    bool outermost_;
};

struct CollectiveInFlight {
    std::string name;
    double since = 0;  // CLOCK_MONOTONIC seconds
};

std::optional<CollectiveInFlight> collective_in_flight();

// Seconds this process has spent blocked in trainrt's collectives since it started (outermost
// scopes only). The metrics take differences of it: an iteration's time less its blocked time is
// the rank's own work, which is what tells a straggler from the ranks waiting for it.
double blocked_seconds();

}  // namespace trainrt::comm
