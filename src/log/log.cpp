#include "log/log.hpp"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace trainrt::log {
namespace {

struct Loggers {
    std::shared_ptr<spdlog::logger> out, err;
    std::mutex mutex;
    std::string tag = "[trainrt]";
    std::atomic<int> rank{-1};
    std::function<void()> before_line;
};

Loggers& loggers() {
    static Loggers* all = [] {
        auto* made = new Loggers;  // leaked: lines may still be written while statics are destroyed
        made->out = std::make_shared<spdlog::logger>("trainrt.out", std::make_shared<spdlog::sinks::stdout_sink_mt>());
        made->err = std::make_shared<spdlog::logger>("trainrt.err", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        for (auto* logger : {made->out.get(), made->err.get()}) {
            logger->set_pattern("%v");
            logger->set_level(spdlog::level::trace);
            logger->flush_on(spdlog::level::trace);  // a line is out when write() returns
        }
        return made;
    }();
    return *all;
}

std::atomic<Level> g_level{Level::info};

const char* level_word(Level level) {
    switch (level) {
        case Level::debug: return "debug: ";
        case Level::warn: return "warning: ";
        case Level::error: return "error: ";
        case Level::info:
        case Level::off: break;
    }
    return "";
}

}  // namespace

void set_rank(int rank) {
    Loggers& all = loggers();
    std::lock_guard<std::mutex> lock(all.mutex);
    all.rank = rank;
    all.tag = fmt::format("[trainrt {}]", rank);
}

void set_role(const std::string& who) {
    Loggers& all = loggers();
    std::lock_guard<std::mutex> lock(all.mutex);
    all.tag = "[trainrt " + who + "]";
}

void set_level(Level level) { g_level.store(level); }

std::string tag() {
    Loggers& all = loggers();
    std::lock_guard<std::mutex> lock(all.mutex);
    return all.tag;
}

void set_line_break(std::function<void()> before_line) {
    Loggers& all = loggers();
    std::lock_guard<std::mutex> lock(all.mutex);
    all.before_line = std::move(before_line);
}
Level level() { return g_level.load(); }

void write(Level level, const std::string& text) noexcept {
    try {
        Loggers& all = loggers();
        std::lock_guard<std::mutex> lock(all.mutex);  // one line at a time, after a redrawn line ended
        if (all.before_line) all.before_line();
        (level == Level::info ? all.out : all.err)->info(all.tag + " " + level_word(level) + text);
    } catch (...) {  // a line that cannot be printed never ends the run
    }
}

namespace {

// The rank the launcher gave this process, before MPI_Init; 0 when none says (a plain start).
int launcher_rank() {
    for (const char* name : {"PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
        if (const char* value = std::getenv(name); value != nullptr && *value != '\0') return std::atoi(value);
    return 0;
}

}  // namespace

void write_once(Level level, const std::string& text) noexcept {
    const int rank = loggers().rank.load();
    if (rank == 0 || (rank < 0 && launcher_rank() == 0)) write(level, text);
}

}  // namespace trainrt::log
