#include "launch/slurm_commands.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <regex>

#include <fmt/format.h>

extern char** environ;

namespace trainrt::launch {
namespace {

std::string program_from_env(const char* variable, const char* fallback) {
    const char* value = std::getenv(variable);
    return value != nullptr && *value != '\0' ? value : fallback;
}

// Reads `fd` until EOF or the deadline; true when EOF came first.
bool read_until_eof(int fd, std::string& output, std::chrono::steady_clock::time_point deadline) {
    char buffer[4096];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) return false;
        pollfd entry{fd, POLLIN, 0};
        int ready = ::poll(&entry, 1, static_cast<int>(left));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return false;
        ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return true;
        output.append(buffer, static_cast<std::size_t>(got));
    }
}

// Waits for the child until the deadline, then kills its process group (it and anything it
// started) and reaps it. -1 unless it exited by itself.
int wait_child(pid_t pid, std::chrono::steady_clock::time_point deadline, bool& killed) {
    int status = 0;
    for (;;) {
        pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (done < 0 && errno != EINTR) return -1;
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(-pid, SIGKILL);
            killed = true;
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        ::usleep(5000);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

ProgramResult run_program(const std::vector<std::string>& argv, double timeout_s) {
    ProgramResult result;
    int pipe_fds[2];
    if (argv.empty() || ::pipe2(pipe_fds, O_CLOEXEC) != 0) return result;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);  // its own group: killable whole
    posix_spawnattr_setpgroup(&attributes, 0);
    pid_t pid = -1;
    int spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(pipe_fds[1]);
    if (spawned != 0) {
        ::close(pipe_fds[0]);
        result.output = std::string(argv[0]) + ": " + std::strerror(spawned);
        return result;
    }
    result.started = true;
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
    bool killed = !read_until_eof(pipe_fds[0], result.output, deadline);
    if (killed) ::kill(-pid, SIGKILL);
    ::close(pipe_fds[0]);
    result.exit_code = wait_child(pid, deadline, killed);
    if (killed) {
        result.exit_code = -1;
        result.output += fmt::format(" (killed after {:g} s)", timeout_s);
    }
    while (!result.output.empty() && result.output.back() == '\n') result.output.pop_back();
    return result;
}

std::optional<double> parse_time_left(const std::string& text) {
    static const std::regex format(R"(^\s*(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)\s*$)");
    std::smatch match;
    if (!std::regex_match(text, match, format)) return std::nullopt;
    auto field = [&](int i) { return match[i].matched ? std::stod(match[i].str()) : 0.0; };
    return field(1) * 86400 + field(2) * 3600 + field(3) * 60 + field(4);
}

std::string scontrol_program() { return program_from_env("TRAINRT_SCONTROL", "scontrol"); }

std::optional<double> query_time_left(const std::string& job_id, std::string* why) {
    ProgramResult result = run_program(
        {program_from_env("TRAINRT_SQUEUE", "squeue"), "-h", "-j", job_id, "-o", "%L"}, 20);
    if (!result.started || result.exit_code != 0) {
        if (why) *why = "squeue: " + result.output;
        return std::nullopt;
    }
    auto left = parse_time_left(result.output);
    if (!left && why) *why = "time left is '" + result.output + "'";
    return left;
}

SlurmJobState query_job_state(const std::string& job_id) {
    SlurmJobState job;
    ProgramResult result = run_program({scontrol_program(), "show", "job", "-o", job_id}, 20);
    if (!result.started || result.exit_code != 0) {
        job.error = "scontrol show job: " + result.output;
        return job;
    }
    std::smatch match;
    if (std::regex_search(result.output, match, std::regex(R"(\bJobState=(\S+))")))
        job.state = match[1].str();
    if (std::regex_search(result.output, match, std::regex(R"(\bRestarts=(\d+))")))
        job.restarts = std::stoi(match[1].str());
    if (job.state.empty()) job.error = "no JobState in: " + result.output.substr(0, 200);
    return job;
}

ProgramResult requeue_job(const std::string& job_id) {
    return run_program({scontrol_program(), "requeue", job_id}, 30);
}

}  // namespace trainrt::launch
