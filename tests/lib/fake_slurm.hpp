#pragma once
// A scripted Slurm for the supervisor's unit tests: node states, probes, requeue, cancel, and
// steps whose "ranks" write what real ranks write (start, finish, failure, stop records and
// heartbeats) at the fake clock's time, then end with an exit code. Nothing here sleeps.
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include "launch/slurm_client.hpp"
#include "runlog/events.hpp"
#include "runlog/heartbeats.hpp"
#include "runlog/run_files.hpp"
#include "storage/posix.hpp"
#include "supervise/clock.hpp"
#include "trainrt/error.hpp"

namespace trainrt::testing {

class FakeClock final : public supervise::Clock {
public:
    double now() override { return now_; }
    void sleep(double seconds) override {
        slept.push_back(seconds);
        now_ += seconds;
    }
    void advance(double seconds) { now_ += seconds; }
    std::vector<double> slept;

private:
    double now_ = 1800000000.0;
};

// A process that does its work when waited for, or at its first poll when it does not run until
// waited for. A body returning kRunsOn never ends (srun waiting for a lost node's tasks): poll()
// says -1 until stop(). `stopped_flag`, when given, outlives the process (its owner frees it):
// it turns true on stop().
class FakeProcess final : public launch::Process {
public:
    static constexpr int kRunsOn = -1;

    explicit FakeProcess(std::function<int()> body, bool runs_until_waited = true,
                         std::shared_ptr<bool> stopped_flag = nullptr)
        : body_(std::move(body)), running_(runs_until_waited), stopped_flag_(std::move(stopped_flag)) {}
    int wait() override {
        run_once();
        if (code_ == kRunsOn) throw std::logic_error("FakeProcess: waited for a step that never ends");
        return code_;
    }
    int poll() override {
        if (running_ && !ran_) return -1;
        run_once();
        return code_;
    }
    void stop(double) noexcept override {
        if (stopped_flag_) *stopped_flag_ = true;
        ran_ = true;
        code_ = 143;
    }

private:
    void run_once() {
        if (!ran_) code_ = body_();
        ran_ = true;
    }

    std::function<int()> body_;
    bool running_;
    std::shared_ptr<bool> stopped_flag_;
    bool ran_ = false;
    int code_ = 0;
};

class FakeSlurm final : public launch::SlurmClient {
public:
    using StepBody = std::function<int(const launch::StepRequest&)>;

    std::vector<std::string> nodes = {"node1", "node2", "node3"};
    std::map<std::string, std::string> states;  // node -> sinfo state ("down", "no_respond", ...)
    std::set<std::string> dead;                 // nodes whose probe fails
    std::set<std::string> daemon_dead;          // nodes whose slurmd does not answer
    std::deque<StepBody> steps;                 // one per launch, in order
    std::vector<launch::StepRequest> launched;
    std::vector<std::string> probed, asked, requeued, cancelled;
    launch::SlurmJobState job{"RUNNING", 0, "/tmp/job.out", ""};
    bool scontrol_found = true;
    bool srun_missing = false;
    int requeue_exit = 0;
    bool requeue_done_anyway = false;  // a failing requeue that slurmctld carried out (scontrol killed)

    std::optional<double> time_left(const std::string&, std::string*) override { return std::nullopt; }
    launch::SlurmJobState job_state(const std::string&) override {
        return scontrol_found ? job : launch::SlurmJobState{"", -1, "", "not found"};
    }
    launch::ProgramResult requeue(const std::string& id) override {
        if (!scontrol_found) return {false, -1, "scontrol: not found"};
        requeued.push_back(id);
        if (requeue_done_anyway) ++job.restarts;
        return {true, requeue_exit, requeue_exit == 0 ? "" : "Requested operation not supported"};
    }
    bool has_scontrol() override { return scontrol_found; }
    std::string scontrol_name() const override { return "scontrol"; }
    void cancel(const std::string& id) override { cancelled.push_back(id); }
    std::vector<std::string> hostnames(const std::string&) override { return nodes; }
    std::vector<std::string> nodes_in_state(const std::string&, const std::string& wanted) override {
        std::vector<std::string> found;
        for (const auto& [node, state] : states)
            if (wanted.find(state) != std::string::npos) found.push_back(node);
        return found;
    }
    bool probe(const std::string& node, double) override {
        probed.push_back(node);
        return dead.count(node) == 0;
    }
    std::optional<bool> daemon_answers(const std::string& node, double) override {
        std::lock_guard<std::mutex> lock(asked_mutex_);  // asked in parallel
        asked.push_back(node);
        return daemon_dead.count(node) == 0;
    }
    std::unique_ptr<launch::Process> start_step(const launch::StepRequest& request) override {
        if (srun_missing) throw LaunchError("cannot start srun: No such file or directory");
        launched.push_back(request);
        if (steps.empty()) throw std::logic_error("FakeSlurm: more steps launched than scripted");
        StepBody body = std::move(steps.front());
        steps.pop_front();
        return std::make_unique<FakeProcess>([body, request] { return body(request); }, false);
    }

private:
    std::mutex asked_mutex_;
};

// What a step's rank 0 writes, at the fake clock's time.
class FakeRanks {
public:
    FakeRanks(std::string run_dir, FakeClock& clock) : run_dir_(std::move(run_dir)), clock_(clock) {}

    void record(const runlog::EventBody& body, int world_size = 6) {
        Context context;
        context.job_id = "42";
        context.world_size = world_size;
        clock_.advance(0.5);
        storage::append_line(runlog::path_in(run_dir_, runlog::kEvents),
                             runlog::to_json(body, context, clock_.now()).dump());
    }
    void start(const std::vector<std::string>& hosts) {
        record(runlog::StartEvent{hosts, "pmix", "fashion_mlp", "", "", 0, 3},
               static_cast<int>(hosts.size()) * 2);
    }
    void finish() { record(runlog::FinishEvent{10}); }
    void fail(int rank, const std::string& reason) {
        record(runlog::FailureEvent{rank, "rank " + std::to_string(rank) + " failed", reason, std::nullopt, "", false,
                                    std::nullopt});
    }
    void stop() { record(runlog::StopEvent{"signal", 5, std::string("checkpoint_000005"), 5, {}, 0.1, "USR2", 0}); }
    void beat(const std::string& host, double at) { runlog::write_heartbeat(run_dir_, host, at); }

private:
    std::string run_dir_;
    FakeClock& clock_;
};

}  // namespace trainrt::testing
