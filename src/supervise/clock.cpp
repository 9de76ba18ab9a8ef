#include "supervise/clock.hpp"

#include <time.h>

#include "runlog/clock.hpp"

namespace trainrt::supervise {
namespace {

class SystemClock final : public Clock {
public:
    double now() override { return runlog::now_seconds(); }
    void sleep(double seconds) override {
        if (seconds <= 0) return;
        timespec wait{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<time_t>(seconds)) * 1e9)};
        ::nanosleep(&wait, nullptr);  // EINTR: a signal ends the wait early, the caller looks again
    }
};

}  // namespace

Clock& system_clock() {
    static SystemClock clock;
    return clock;
}

}  // namespace trainrt::supervise
