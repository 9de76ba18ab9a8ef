#include "runtime/watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "comm/collective_watch.hpp"
#include "runtime/stop_signals.hpp"
#include "storage/posix.hpp"
#include "runlog/events.hpp"
#include "trainrt/error.hpp"

namespace trainrt::runtime {

Watchdog::Watchdog(double timeout_s, const Context& context, std::function<std::string()> where)
    : timeout_s_(timeout_s), context_(context), where_(std::move(where)) {
    if (timeout_s_ > 0) thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Watchdog::loop() {
    const auto period = std::chrono::duration<double>(std::clamp(timeout_s_ / 4, 0.05, 1.0));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
        auto in_flight = comm::collective_in_flight();
        if (!in_flight) continue;
        const double blocked = monotonic_seconds() - in_flight->since;
        if (blocked > timeout_s_) fire(in_flight->name, blocked);
    }
}

// The main thread is stuck inside MPI, so no clean shutdown is possible: record, then _Exit.
void Watchdog::fire(const std::string& collective, double blocked_s) {
    const std::string message = fmt::format(
        "watchdog: blocked {:.1f} s in {} at {}: another rank is stuck or gone; ending the step "
        "([failure] collective_timeout = {} s)", blocked_s, collective, where_(), timeout_s_);
    storage::write_stderr_line(fmt::format("trainrt: rank {}: {}", context_.world_rank, message));
    try {
        if (!context_.run_dir.empty())
            runlog::append(context_.run_dir, context_,
                           runlog::FailureEvent{context_.world_rank, message, "collective_timeout",
                                                exit_codes::comm, "", false, std::nullopt});
    } catch (...) {
    }
    std::cout.flush();
    std::_Exit(exit_codes::comm);
}

}  // namespace trainrt::runtime
