#include "launch/slurm_client.hpp"

#include <cstdlib>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "launch/tcp.hpp"

namespace trainrt::launch {
namespace {

std::string program_from_env(const char* variable, const std::string& fallback) {
    const char* value = std::getenv(variable);
    return value != nullptr && *value != '\0' ? value : fallback;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream stream(text);
    for (std::string line; std::getline(stream, line);)
        if (!line.empty()) lines.push_back(line);
    return lines;
}

class CommandSlurmClient final : public SlurmClient {
public:
    explicit CommandSlurmClient(SlurmPrograms programs) : programs_(std::move(programs)) {}

    std::optional<double> time_left(const std::string& job, std::string* why) override {
        ProgramResult result = run_program({programs_.squeue, "-h", "-j", job, "-o", "%L"}, 20);
        if (!result.started || result.exit_code != 0) {
            if (why) *why = "squeue: " + result.output;
            return std::nullopt;
        }
        auto left = parse_time_left(result.output);
        if (!left && why) *why = "time left is '" + result.output + "'";
        return left;
    }

    SlurmJobState job_state(const std::string& job) override {
        ProgramResult result = run_program({programs_.scontrol, "show", "job", "-o", job}, 20);
        if (!result.started || result.exit_code != 0) return {"", -1, "", "scontrol show job: " + result.output};
        return parse_job_state(result.output);
    }

    ProgramResult requeue(const std::string& job) override {
        return run_program({programs_.scontrol, "requeue", job}, 30);
    }

    bool has_scontrol() override { return run_program({programs_.scontrol, "--version"}, 10).started; }
    std::string scontrol_name() const override { return programs_.scontrol; }

    void cancel(const std::string& job) override { run_program({programs_.scancel, job}, 30); }

    std::vector<std::string> hostnames(const std::string& nodelist) override {
        if (nodelist.empty()) return {};
        ProgramResult result = run_program({programs_.scontrol, "show", "hostnames", nodelist}, 20);
        return result.exit_code == 0 ? lines_of(result.output) : std::vector<std::string>{};
    }

    std::vector<std::string> nodes_in_state(const std::string& nodelist, const std::string& states) override {
        if (nodelist.empty()) return {};
        ProgramResult result =
            run_program({programs_.sinfo, "-h", "-N", "-n", nodelist, "-t", states, "-o", "%N"}, 20);
        return result.exit_code == 0 ? lines_of(result.output) : std::vector<std::string>{};
    }

    bool probe(const std::string& node, double timeout_s) override {
        ProgramResult result = run_program({programs_.srun, "--quiet", "--overlap", "-N", "1", "-n", "1", "-w", node,
                                            "--mpi=none", "--kill-on-bad-exit=0", "true"},
                                           timeout_s, allocation_task_counts());
        return result.exit_code == 0;
    }

    std::optional<bool> daemon_answers(const std::string& node, double timeout_s) override {
        if (slurmd_port_ == 0) {
            ProgramResult config = run_program({programs_.scontrol, "show", "config"}, 20);
            if (config.exit_code == 0) slurmd_port_ = parse_slurmd_port(config.output);
        }
        ProgramResult shown = run_program({programs_.scontrol, "-o", "show", "node", node}, 20);
        if (shown.exit_code != 0 || slurmd_port_ == 0) return std::nullopt;
        auto daemon = parse_node_address(shown.output, slurmd_port_);
        if (!daemon) return std::nullopt;
        return static_cast<bool>(
            tcp::connect_to(daemon->address, static_cast<std::uint16_t>(daemon->port), timeout_s, nullptr));
    }

    std::unique_ptr<Process> start_step(const StepRequest& request) override {
        std::vector<std::string> argv = {programs_.srun};
        argv.insert(argv.end(), request.srun_options.begin(), request.srun_options.end());
        argv.insert(argv.end(), request.command.begin(), request.command.end());
        return std::make_unique<Child>(spawn(argv, {request.unset_env, request.output_path, request.set_env}));
    }

private:
    SlurmPrograms programs_;
    int slurmd_port_ = 0;  // SlurmdPort, read once
};

}  // namespace

const std::vector<std::string>& allocation_task_counts() {
    static const std::vector<std::string> names = {"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NTASKS_PER_NODE",
                                                   "SLURM_TASKS_PER_NODE"};
    return names;
}

SlurmPrograms SlurmPrograms::for_ranks() {
    SlurmPrograms programs;
    programs.scontrol = program_from_env("TRAINRT_SCONTROL", programs.scontrol);
    programs.squeue = program_from_env("TRAINRT_SQUEUE", programs.squeue);
    return programs;
}

std::unique_ptr<SlurmClient> make_slurm_client(SlurmPrograms programs) {
    return std::make_unique<CommandSlurmClient>(std::move(programs));
}

std::optional<double> parse_time_left(const std::string& text) {
    static const std::regex format(R"(^\s*(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)\s*$)");
    std::smatch match;
    if (!std::regex_match(text, match, format)) return std::nullopt;
    auto field = [&](int i) { return match[i].matched ? std::stod(match[i].str()) : 0.0; };
    return field(1) * 86400 + field(2) * 3600 + field(3) * 60 + field(4);
}

SlurmJobState parse_job_state(const std::string& scontrol_output) {
    SlurmJobState job;
    std::smatch match;
    if (std::regex_search(scontrol_output, match, std::regex(R"(\bJobState=(\S+))"))) job.state = match[1].str();
    if (std::regex_search(scontrol_output, match, std::regex(R"(\bRestarts=(\d+))")))
        job.restarts = std::stoi(match[1].str());
    if (std::regex_search(scontrol_output, match, std::regex(R"(\bStdOut=(\S+))"))) job.output_path = match[1].str();
    if (job.state.empty()) job.error = "no JobState in: " + scontrol_output.substr(0, 200);
    return job;
}

std::optional<DaemonAddress> parse_node_address(const std::string& show_node_output, int slurmd_port) {
    std::smatch match;
    if (!std::regex_search(show_node_output, match, std::regex(R"(\bNodeAddr=(\S+))"))) return std::nullopt;
    DaemonAddress daemon{match[1].str(), slurmd_port};
    if (std::regex_search(show_node_output, match, std::regex(R"(\bPort=(\d+))"))) daemon.port = std::stoi(match[1].str());
    if (daemon.port <= 0 || daemon.port > 65535) return std::nullopt;
    return daemon;
}

int parse_slurmd_port(const std::string& show_config_output) {
    std::smatch match;
    return std::regex_search(show_config_output, match, std::regex(R"(\bSlurmdPort\s*=\s*(\d+))"))
               ? std::stoi(match[1].str())
               : 0;
}

}  // namespace trainrt::launch
