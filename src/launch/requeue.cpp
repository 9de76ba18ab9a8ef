#include "launch/requeue.hpp"

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::launch {
namespace {

RequeueOutcome not_running(const std::string& job_id, const SlurmJobState& job, int restart_count) {
    if (job.restarts > restart_count)
        return {exit_codes::stopped, "slurm", fmt::format("job {} is already being requeued by Slurm", job_id)};
    return {exit_codes::stopped, "",
            fmt::format("job {} is ending (state {}: cancelled, or preempted without requeue): not requeued; "
                        "resubmit it to resume", job_id, job.state)};
}

}  // namespace

RequeueOutcome request_requeue(SlurmClient& slurm, const std::string& job_id, int restart_count) {
    const SlurmJobState job = slurm.job_state(job_id);
    if (job.state.empty() && !slurm.has_scontrol())
        return {exit_codes::requeue_needed, "",
                fmt::format("cannot requeue job {}: '{}' not found (set TRAINRT_SCONTROL or PATH); exiting {} so "
                            "the supervisor (or RequeueExit={}) requeues it", job_id, slurm.scontrol_name(),
                            exit_codes::requeue_needed, exit_codes::requeue_needed)};
    if (!job.state.empty() && job.state != "RUNNING") return not_running(job_id, job, restart_count);
    const ProgramResult result = slurm.requeue(job_id);
    if (!result.started || (result.exit_code != 0 && job.state.empty()))  // the controller did not answer
        return {exit_codes::requeue_needed, "",
                fmt::format("scontrol requeue {} failed ({}); slurmctld unreachable? exiting {} so the supervisor "
                            "tries again", job_id, result.output, exit_codes::requeue_needed)};
    // The requeue ends the job's steps: scontrol, a child of a rank, may be killed by it after
    // slurmctld took the request (then it "fails" with no message). The job's restart count says.
    if (result.exit_code != 0 && slurm.job_state(job_id).restarts > restart_count)
        return {exit_codes::stopped, "trainrt",
                fmt::format("requeued job {} (scontrol ended before it said so): it resumes from the checkpoint "
                            "when Slurm starts it again", job_id)};
    if (result.exit_code != 0)
        return {exit_codes::stopped, "",
                fmt::format("scontrol requeue {} failed: {}; resubmit the job to resume", job_id, result.output)};
    return {exit_codes::stopped, "trainrt",
            fmt::format("requeued job {}: it resumes from the checkpoint when Slurm starts it again", job_id)};
}

}  // namespace trainrt::launch
