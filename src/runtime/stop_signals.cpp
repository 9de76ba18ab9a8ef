#include "runtime/stop_signals.hpp"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "trainrt/error.hpp"

namespace trainrt::runtime {
namespace {

std::atomic<int> received_signal{0};
std::atomic<double> received_at{0.0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<double>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

// Only the first signal counts: a later one (Slurm's TERM after our own requeue) changes nothing.
// The time is published before the signal, so whoever sees the signal sees its time.
void on_stop_signal(int signal_number) {
    if (received_signal.load() != 0) return;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    received_at.store(static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9);
    int none = 0;
    received_signal.compare_exchange_strong(none, signal_number);
}

void on_interrupt(int signal_number) {
    if (received_signal.load() != 0) _exit(exit_codes::interrupted);
    on_stop_signal(signal_number);
}

void install(int signal_number, void (*handler)(int)) {
    struct sigaction action{};
    action.sa_handler = handler;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(signal_number, &action, nullptr) != 0)
        throw Error(std::string("runtime: sigaction(") + signal_name(signal_number) + ") failed: " + strerror(errno));
}

}  // namespace

double monotonic_seconds() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
}

void install_stop_signals(const std::vector<int>& signals) {
    for (int signal_number : signals) install(signal_number, on_stop_signal);
}

void install_interrupt_handler() { install(SIGINT, on_interrupt); }

int stop_signal_received() { return received_signal.load(); }

double stop_signal_time() { return received_at.load(); }

std::string signal_name(int signal_number) {
    const char* abbrev = sigabbrev_np(signal_number);
    return abbrev != nullptr ? abbrev : std::to_string(signal_number);
}

}  // namespace trainrt::runtime
