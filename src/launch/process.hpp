#pragma once
// Programs trainrt starts: Slurm's clients, srun and mpiexec steps, gnuplot. Run directly
// (posix_spawnp, no shell), never through system(3).
#include <sys/types.h>

#include <string>
#include <vector>

namespace trainrt::launch {

struct ProgramResult {
    bool started = false;   // false: the program was not found or could not be run
    int exit_code = -1;     // -1 when killed or not started
    std::string output;     // stdout and stderr together, trailing newline removed
};

// Runs argv[0] (searched on PATH) in its own process group, without the variables in
// `unset_env`, and collects its output; kills the group after `timeout_s`.
ProgramResult run_program(const std::vector<std::string>& argv, double timeout_s,
                          const std::vector<std::string>& unset_env = {});

// What a child started with spawn() gets besides its arguments.
struct SpawnOptions {
    std::vector<std::string> unset_env;  // variables removed from this process's environment
    std::string output_path;             // "": inherit stdout/stderr; else appended to this file
    std::vector<std::string> set_env;    // "NAME=value" entries, replacing this process's NAME
};

// A program running beside this one, as the supervisor sees it (a step, a watcher step). Tests
// fake it.
class Process {
public:
    virtual ~Process() = default;
    // Blocks until it ends: its exit code, or 128 + the signal that ended it (as a shell reports
    // it). A signal delivered to this process interrupts the wait only to run its handler.
    virtual int wait() = 0;
    // The exit status once it has ended (the same on every later call), without blocking; -1 while
    // it runs.
    virtual int poll() = 0;
    // SIGTERM, up to `grace_s` for it to end, then SIGKILL; reaps it. Never throws.
    virtual void stop(double grace_s) noexcept = 0;
};

// A child process sharing this process's stdout/stderr (the job's output) and process group, so
// that Slurm's signals to the job reach it as they reach this process. Move-only; the destructor
// neither waits nor kills: its owner decides (wait for a step, stop a watcher).
class Child final : public Process {
public:
    Child() = default;
    explicit Child(pid_t pid) : pid_(pid) {}
    Child(Child&& other) noexcept : pid_(other.pid_), exit_code_(other.exit_code_) { other.pid_ = -1; }
    Child& operator=(Child&& other) noexcept;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    pid_t pid() const { return pid_; }
    int wait() override;
    int poll() override;
    void stop(double grace_s) noexcept override;

private:
    pid_t pid_ = -1;
    int exit_code_ = -1;  // once reaped (by wait, poll or stop): what wait and poll return from then on
};

// Starts argv[0] (searched on PATH). LaunchError naming the program when it cannot be started.
Child spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// This program's path (/proc/self/exe), to start more of itself (a watcher, a sweep's trials).
std::string own_program();

}  // namespace trainrt::launch
