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

}  // namespace trainrt::comm
