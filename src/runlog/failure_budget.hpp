#pragma once
// The failure budget ([failure] max_failures) over the run's history: checked by rank 0 at every
// start and by the supervisor after every step. The final record it writes on giving up starts a
// new count, so a resubmitted job (after fixing the cause) trains again.
#include <string>

#include "runlog/history.hpp"
#include "trainrt/context.hpp"

namespace trainrt::runlog {

// The run's history; records the tolerant reader skipped are named on stderr.
History read_history(const std::string& run_dir);

// More failures than `max_failures` (-1: never exhausted).
bool budget_exhausted(const History& history, int max_failures);

// Writes the final failure record for an exhausted budget and returns its message.
std::string record_give_up(const std::string& run_dir, const Context& context, const History& history,
                           int max_failures);

}  // namespace trainrt::runlog
