#pragma once
// Turns a hung collective into a failure: a thread that, when this rank has been blocked in one
// collective for longer than [failure] collective_timeout, prints one line naming the collective
// and the step, records a failure event and ends the process (the launcher then ends the step on
// every rank). Never throws from its thread.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "trainrt/context.hpp"

namespace trainrt::runtime {

class Watchdog {
public:
    // `where` says where training stands ("step boundary 517, iteration 3"); called from the
    // watchdog thread, so it must only read atomics. timeout_s <= 0: no thread.
    Watchdog(double timeout_s, const Context& context, std::function<std::string()> where);
    ~Watchdog();
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

private:
    void loop();
    [[noreturn]] void fire(const std::string& collective, double blocked_s);

    double timeout_s_;
    const Context& context_;
    std::function<std::string()> where_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace trainrt::runtime
