#pragma once
// The supervisor's wall clock and its waits, injected so that its unit tests run every timeout
// and back-off without sleeping.
namespace trainrt::supervise {

class Clock {
public:
    virtual ~Clock() = default;
    virtual double now() = 0;                 // seconds since the epoch (heartbeats use the same)
    virtual void sleep(double seconds) = 0;   // may return early when a signal arrives
};

Clock& system_clock();

}  // namespace trainrt::supervise
