#pragma once
// Fault injection for tests: TRAINRT_FAULT=<phase>[:<rank>] makes the given rank (every rank
// when omitted) die by SIGKILL when it reaches that phase of a checkpoint save; a third field
// `:<iteration>` limits it to the save of that report iteration. Phases: before_data, mid_data,
// after_data (written, not yet fsynced), before_manifest, before_rename, during_retention.
// Local levels (local_level.hpp): before_partner (written, before the partner copies),
// local_before_manifest, local_before_rename, local_retention (this rank's own commit), and
// during_flush (copying a local checkpoint to the run directory, on its thread; it is published
// at the next save through before_manifest/before_rename with that checkpoint's iteration).
// Runtime phases: `report` (SIGKILL when reporting that iteration) and `hang_report` (the rank
// blocks forever there, for the collective watchdog's tests).
// Unset in production: one getenv at start-up, then a compare per phase.
#include <cstdint>

namespace trainrt::checkpoint {

// The report iteration whose save is in progress (set by the commit protocol).
void set_fault_iteration(std::int64_t iteration);
void fault_point(const char* phase, int rank);
// The same for a phase outside a save, at an explicit iteration (leaves the save's alone).
void fault_point_at(const char* phase, int rank, std::int64_t iteration);

}  // namespace trainrt::checkpoint
