#pragma once
// Stop requests by signal: the handler only records which signal came and when (async-signal-
// safe); the run loop acts on it at the next step boundary. Process-wide, installed once.
#include <string>
#include <vector>

namespace trainrt::runtime {

// Installs the handler for `signals` (SA_RESTART, so blocking calls are not interrupted).
void install_stop_signals(const std::vector<int>& signals);

// Ctrl-C: SIGINT is a stop request like the stop signals (the run ends with exit_codes::
// interrupted, not requeued); a SIGINT after any stop request ends the process at once (_exit
// with exit_codes::interrupted). mpiexec forwards the first Ctrl-C to every rank.
void install_interrupt_handler();

// The first stop signal received, 0 when none.
int stop_signal_received();

// CLOCK_MONOTONIC seconds when it was received (0 when none).
double stop_signal_time();

// "USR2" for SIGUSR2; the number as text for others.
std::string signal_name(int signal_number);

// CLOCK_MONOTONIC now, in seconds (comparable with stop_signal_time()).
double monotonic_seconds();

}  // namespace trainrt::runtime
