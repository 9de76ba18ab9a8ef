#pragma once
// Whether a restarted run resumed: the checkpoint restored at start-up is only offered to the
// workload. A run resumes when the workload takes it (session.checkpoint(), Python's
// get_checkpoint()); then, and only then, rank 0 says "resuming from ..." and records the restore
// event. A workload that reaches its first report (or its end) without taking it started over:
// rank 0 says so in one warning, sets the earlier attempts' result rows aside, and the run counts
// as a fresh start. Iteration numbers go on after the restored one either way, so a new
// checkpoint never takes the name of an old one.
#include <cstdint>
#include <optional>

#include "metrics/result_log.hpp"
#include "trainrt/checkpoint.hpp"
#include "trainrt/context.hpp"

namespace trainrt::runtime {

class Resume {
public:
    explicit Resume(const Context& context) : context_(context) {}
    // After the restore at start-up; `superseded`: result rows it moved aside; `level`: where the
    // checkpoint was found (pfs, local, partner).
    void offer(std::optional<Checkpoint> restored, double read_seconds, std::int64_t superseded,
               std::string level = "pfs");
    // The workload takes the checkpoint (nullptr: none). The first take is recorded.
    const Checkpoint* take() const;
    // At the first step boundary or the end: a checkpoint never taken is given up (see above).
    void settle(metrics::ResultLog& results);
    // A checkpoint was restored and taken.
    bool resumed() const { return restored_.has_value() && taken_; }
    // Seconds spent verifying and reading the taken checkpoint.
    double read_seconds() const;

private:
    const Context& context_;
    std::optional<Checkpoint> restored_;
    double restore_seconds_ = 0;
    std::int64_t superseded_ = 0;
    std::string level_ = "pfs";
    bool settled_ = false;
    mutable bool taken_ = false;  // taking is a read for the workload; recording it is ours
};

}  // namespace trainrt::runtime
