#include "launch/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "trainrt/error.hpp"

extern char** environ;

namespace trainrt::launch {
namespace {

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

// This process's environment without `unset`, with `set` ("NAME=value", replacing NAME). The
// result points into `set` and environ: valid while both are.
std::vector<char*> environment_for(const std::vector<std::string>& unset, const std::vector<std::string>& set = {}) {
    std::vector<std::string_view> replaced;
    for (const std::string& entry : set) replaced.push_back(std::string_view(entry).substr(0, entry.find('=')));
    std::vector<char*> env;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        const std::string_view text(*entry);
        const std::string_view name = text.substr(0, text.find('='));
        const bool dropped = std::find(unset.begin(), unset.end(), name) != unset.end() ||
                             std::find(replaced.begin(), replaced.end(), name) != replaced.end();
        if (!dropped) env.push_back(*entry);
    }
    for (const std::string& entry : set) env.push_back(const_cast<char*>(entry.c_str()));
    env.push_back(nullptr);
    return env;
}

}  // namespace

ProgramResult run_program(const std::vector<std::string>& argv, double timeout_s,
                          const std::vector<std::string>& unset_env) {
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
    std::vector<char*> env = environment_for(unset_env);
    int spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), env.data());
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

Child& Child::operator=(Child&& other) noexcept {
    if (this != &other) {
        pid_ = other.pid_;
        exit_code_ = other.exit_code_;
        other.pid_ = -1;
    }
    return *this;
}

namespace {

int shell_status(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

}  // namespace

int Child::wait() {
    if (pid_ <= 0) return exit_code_;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0)
        if (errno != EINTR) return -1;
    pid_ = -1;
    return exit_code_ = shell_status(status);
}

int Child::poll() {
    if (pid_ <= 0) return exit_code_;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return -1;
    pid_ = -1;
    return exit_code_ = shell_status(status);
}

void Child::stop(double grace_s) noexcept {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    while (std::chrono::steady_clock::now() < deadline) {
        if (poll() >= 0 || pid_ <= 0) return;
        ::usleep(20000);
    }
    ::kill(pid_, SIGKILL);
    wait();
}

Child spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
    if (argv.empty()) throw LaunchError("spawn: no program given");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (!options.output_path.empty()) {
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options.output_path.c_str(),
                                         O_WRONLY | O_APPEND | O_CREAT, 0644);
        posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    }
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    std::vector<char*> env = environment_for(options.unset_env, options.set_env);
    pid_t pid = -1;
    const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env.data());
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) throw LaunchError(fmt::format("cannot start {}: {}", argv[0], std::strerror(spawned)));
    return Child(pid);
}

}  // namespace trainrt::launch

std::string trainrt::launch::own_program() {
    std::error_code error;
    auto path = std::filesystem::read_symlink("/proc/self/exe", error);
    return error ? "trainrt" : path.string();
}
