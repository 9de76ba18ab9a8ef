#pragma once
// Every call trainrt makes to Slurm goes through SlurmClient: rank 0's (time left, job state,
// self-requeue) and the supervisor's (steps, node states, probes, requeue, cancel). The real one
// runs Slurm's client commands; unit tests fake the interface (tests/lib/fake_slurm.hpp).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch/process.hpp"

namespace trainrt::launch {

struct SlurmJobState {
    std::string state;        // JobState, e.g. RUNNING, COMPLETING; empty when unknown
    int restarts = -1;        // Restarts
    std::string output_path;  // StdOut
    std::string error;        // why it is unknown
};

// One srun: its options, the program and its arguments, the environment it must not inherit
// (the batch environment's task counts describe the whole allocation, and make srun refuse an
// explicit geometry), a file its output is appended to ("" = this process's), and "NAME=value"
// entries set in its environment (a sweep's trial: tune/trial_threads.hpp); as SpawnOptions.
struct StepRequest {
    std::vector<std::string> srun_options;
    std::vector<std::string> command;
    std::vector<std::string> unset_env;
    std::string output_path;
    std::vector<std::string> set_env;
};

class SlurmClient {
public:
    virtual ~SlurmClient() = default;
    // Seconds until the job's time limit (squeue %L); nullopt when unlimited or unknown.
    virtual std::optional<double> time_left(const std::string& job, std::string* why) = 0;
    virtual SlurmJobState job_state(const std::string& job) = 0;  // scontrol show job
    virtual ProgramResult requeue(const std::string& job) = 0;    // scontrol requeue
    // Whether scontrol can be run here at all (a container may lack Slurm's clients).
    virtual bool has_scontrol() = 0;
    virtual std::string scontrol_name() const = 0;
    virtual void cancel(const std::string& job) = 0;  // scancel
    // The node names of a Slurm node list ("node[1-3]" -> node1, node2, node3).
    virtual std::vector<std::string> hostnames(const std::string& nodelist) = 0;
    // The nodes of `nodelist` that sinfo reports in one of `states` ("down,drain,fail").
    virtual std::vector<std::string> nodes_in_state(const std::string& nodelist, const std::string& states) = 0;
    // A one-task step on `node` within `timeout_s`: true on a live node, false on a dead or hung one.
    virtual bool probe(const std::string& node, double timeout_s) = 0;
    // Whether `node`'s slurmd accepts a TCP connection within `timeout_s` (its NodeAddr and port
    // from scontrol): false when its daemons are dead or it is off, true on a live node (and on a
    // hung one, whose kernel still accepts); nullopt when scontrol cannot say where it listens.
    // Milliseconds where a probe step takes Slurm's MessageTimeout to fail.
    virtual std::optional<bool> daemon_answers(const std::string& node, double timeout_s) = 0;
    // srun, running beside this process. LaunchError when srun cannot be started.
    virtual std::unique_ptr<Process> start_step(const StepRequest& request) = 0;
};

// Which programs the real client runs. Ranks honour TRAINRT_SCONTROL / TRAINRT_SQUEUE (a
// container names its own, or none); the supervisor runs outside any container and uses Slurm's.
struct SlurmPrograms {
    std::string scontrol = "scontrol", squeue = "squeue", sinfo = "sinfo", scancel = "scancel", srun = "srun";
    static SlurmPrograms for_ranks();
};

std::unique_ptr<SlurmClient> make_slurm_client(SlurmPrograms programs = {});

// The batch environment's task counts: they describe the whole allocation, so a step of another
// shape (a probe, a watcher, a relaunch on fewer nodes) must not inherit them.
const std::vector<std::string>& allocation_task_counts();

// squeue's %L: "[days-]hours:minutes:seconds", "minutes:seconds" -> seconds; nullopt for
// UNLIMITED, NOT_SET, INVALID or anything else.
std::optional<double> parse_time_left(const std::string& text);

// `scontrol show job -o` output -> state, restarts, StdOut.
SlurmJobState parse_job_state(const std::string& scontrol_output);

// Where a node's slurmd listens: NodeAddr and Port from `scontrol -o show node NODE` (Port only
// when the node sets its own), else `slurmd_port` (SlurmdPort of `scontrol show config`).
struct DaemonAddress {
    std::string address;
    int port = 0;
};
std::optional<DaemonAddress> parse_node_address(const std::string& show_node_output, int slurmd_port);
// SlurmdPort of `scontrol show config`; 0 when absent.
int parse_slurmd_port(const std::string& show_config_output);

}  // namespace trainrt::launch
