#include "comm/collective_watch.hpp"

#include <time.h>

#include <atomic>

namespace trainrt::comm {
namespace {

std::atomic<const char*> current_name{nullptr};
std::atomic<double> current_since{0.0};
std::atomic<double> blocked_total{0.0};  // written by the thread that runs collectives only

double now_seconds() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
}

}  // namespace

// Nested scopes (a blocking collective made of waits) keep the outermost name and start.
CollectiveScope::CollectiveScope(const char* name) noexcept
    : outermost_(current_name.load() == nullptr) {
    if (!outermost_) return;
    current_since.store(now_seconds());
    current_name.store(name);
}

CollectiveScope::~CollectiveScope() {
    if (!outermost_) return;
    blocked_total.store(blocked_total.load() + (now_seconds() - current_since.load()));
    current_name.store(nullptr);
}

double blocked_seconds() { return blocked_total.load(); }

std::optional<CollectiveInFlight> collective_in_flight() {
    const char* name = current_name.load();
    if (name == nullptr) return std::nullopt;
    return CollectiveInFlight{name, current_since.load()};
}

}  // namespace trainrt::comm
