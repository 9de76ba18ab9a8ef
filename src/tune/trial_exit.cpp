#include "tune/trial_exit.hpp"

#include <algorithm>

#include "trainrt/error.hpp"

namespace trainrt::tune {

bool is_stop_code(int code) {
    return code == exit_codes::stopped || code == exit_codes::requeue_needed || code == exit_codes::interrupted;
}

TrialExit classify_trial_exit(int code, const TrialExitContext& context) {
    if (code == 0) return {TrialEnd::done, code, ""};
    if (is_stop_code(code)) return {TrialEnd::stopped, code, ""};
    if (context.ended_by_sweep) return {TrialEnd::failed, code, ""};
    const int signal = code - 128;
    const bool stop_signal = signal > 0 &&
        std::find(context.stop_signals.begin(), context.stop_signals.end(), signal) != context.stop_signals.end();
    if (stop_signal) return {TrialEnd::stopped, exit_codes::stopped, "killed by a stop signal"};
    if (context.sweep_stopping) return {TrialEnd::stopped, exit_codes::stopped, "during the sweep's stop"};
    return {TrialEnd::failed, code, ""};
}

}  // namespace trainrt::tune
