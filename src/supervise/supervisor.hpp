#pragma once
// The supervisor: keeps one job's steps alive inside its allocation (docs/guides/slurm.md).
//
//   [await_takeover] --(batch host silent)--> decide          (a watcher on another node only)
//   launch --> watch --(step ended, or a node of it gone)--> decide --> relaunch --> launch
//                                             --> requeue      (exit 75 from the step, < min_nodes)
//                                             --> leave        (done, give up, nothing left)
//
// It owns the nodes left out (once out, out for the job), the batch-host watcher step and the
// supervisor's own beat, launch back-off and the failure budget (through decide_after_step), and
// the requeue. Every Slurm call goes through SlurmClient; time through Clock: unit tests drive
// every transition with fakes (tests/supervise/).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch/slurm_client.hpp"
#include "runlog/events.hpp"
#include "supervise/allocation.hpp"
#include "supervise/batch_host.hpp"
#include "supervise/clock.hpp"
#include "supervise/step_launcher.hpp"
#include "supervise/supervised_job.hpp"
#include "supervise/verdict.hpp"
#include "trainrt/context.hpp"

namespace trainrt::supervise {

enum class Phase { await_takeover, launch, watch, decide, relaunch, requeue, leave };
const char* phase_name(Phase phase);

// A watcher supervisor, started by the batch host's supervisor as a one-task step on another
// node: it waits for the batch host to go silent, then supervises the job in its place.
struct WatcherRole {
    std::string batch_host;  // as its beat names it (hostname)
    std::string batch_node;  // as Slurm names it
    NodeSet excluded;        // the nodes the batch host's supervisor had left out
};

struct SupervisorDeps {
    launch::SlurmClient& slurm;
    StepLauncher& launcher;
    Clock& clock;
    std::function<bool()> ending;  // Slurm is ending the job: TERM, USR2 or INT reached us
    Say say;                       // one line for the job's output
    // Starts the watcher step on `node` (never for a watcher itself); nullptr: no watcher.
    std::function<std::unique_ptr<launch::Process>(const std::string& node, const NodeSet& excluded)> start_watcher;
};

class Supervisor {
public:
    Supervisor(SupervisorDeps deps, Allocation allocation, SupervisedJob job, std::optional<WatcherRole> role = {});
    ~Supervisor();
    Supervisor(const Supervisor&) = delete;
    Supervisor& operator=(const Supervisor&) = delete;

    // Runs the machine to its end; returns the exit code for the job (docs/reference/exit-codes.md).
    int run();
    const std::vector<Phase>& trace() const { return trace_; }
    const NodeSet& excluded() const { return excluded_; }

private:
    Phase await_takeover();
    Phase launch();
    Phase watch();
    Phase decide();
    Phase relaunch();
    Phase requeue();
    int leave();

    Phase leave_with(int exit_code);
    bool defer_to_watcher();
    bool step_lost_a_node(double& ask_at);
    void reap_left_behind(bool stop);
    void keep_watcher();
    void stop_helpers();
    Context context() const;

    SupervisorDeps deps_;
    Allocation allocation_;
    SupervisedJob job_;
    std::optional<WatcherRole> role_;
    bool watching_ = false;  // several nodes: beat, and a watcher step for this batch host
    std::vector<Phase> trace_;
    NodeSet excluded_;
    std::vector<std::string> geometry_;
    std::unique_ptr<launch::Process> step_;
    std::optional<runlog::EventTail> step_records_;  // what the step appends to events.jsonl
    NodeSet gone_in_step_;  // nodes found gone while the step ran
    // Steps left to end by themselves: srun waits up to Slurm's KillWait for a gone node's tasks.
    std::vector<std::unique_ptr<launch::Process>> left_behind_;
    double step_started_ = 0;
    int step_status_ = 0;
    StepDecision decision_;
    int exit_code_ = 0;
    bool took_over_ = false; // a watcher that took the job over from its batch host
    bool deferred_ = false;  // the job is another's now: a watcher's that took it over, or Slurm's
    std::unique_ptr<WrapperBeat> beat_;
    std::unique_ptr<launch::Process> watcher_;
    NodeSet watcher_excluded_;
    std::string watcher_on_;  // the watcher step's node
};

}  // namespace trainrt::supervise
