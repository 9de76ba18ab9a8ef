#pragma once
// The one logger (spdlog underneath): every line trainrt prints about a run goes through here,
// tagged with who prints it, "[trainrt 3]" for rank 3 ("[trainrt]" before the rank is known,
// "[trainrt supervise]" for the supervisor), and a level ("warning: ", "error: "; none for info).
// Info goes to stdout, the rest to stderr, each line in one write so ranks sharing a file never
// interleave mid-line. The level is [log] level (TRAINRT_LOG_LEVEL, --log.level). Lines every rank
// would print alike (an agreed refusal, the stop decision) are printed by rank 0 alone: job_*.
#include <functional>
#include <string>

#include <fmt/format.h>

namespace trainrt::log {

enum class Level { debug, info, warn, error, off };

// "[trainrt 3]": call once the rank is known.
void set_rank(int rank);
// "[trainrt <who>]": a process that is not a rank (the supervisor, a CLI command).
void set_role(const std::string& who);
void set_level(Level level);
Level level();
// The tag lines start with: "[trainrt 3]".
std::string tag();

// Called before each line is written: a display that redraws its own line (rank 0's progress on
// a terminal) ends it first. nullptr removes it.
void set_line_break(std::function<void()> before_line);

void write(Level level, const std::string& text) noexcept;
// rank 0 only (others print nothing): lines every rank reaches identically. Before MPI gave this
// process its rank, the launcher's word for it (PMI_RANK, PMIX_RANK, SLURM_PROCID) decides; a
// process no launcher started is rank 0.
void write_once(Level level, const std::string& text) noexcept;

template <class... Args> void debug(fmt::format_string<Args...> format, Args&&... args) {
    if (level() <= Level::debug) write(Level::debug, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args> void info(fmt::format_string<Args...> format, Args&&... args) {
    if (level() <= Level::info) write(Level::info, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args> void warn(fmt::format_string<Args...> format, Args&&... args) {
    if (level() <= Level::warn) write(Level::warn, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args> void error(fmt::format_string<Args...> format, Args&&... args) {
    if (level() <= Level::error) write(Level::error, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args> void job_info(fmt::format_string<Args...> format, Args&&... args) {
    if (level() <= Level::info) write_once(Level::info, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace trainrt::log
