#include "checkpoint/write/fault.hpp"
#include "log/log.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace trainrt::checkpoint {
namespace {

struct FaultSpec {
    std::string phase;
    int rank = -1;               // -1: any rank
    std::int64_t iteration = -1; // -1: any save
};

FaultSpec parse_spec() {
    FaultSpec spec;
    const char* text = std::getenv("TRAINRT_FAULT");
    if (text == nullptr) return spec;
    std::string value(text);
    auto first = value.find(':');
    spec.phase = value.substr(0, first);
    if (first == std::string::npos) return spec;
    auto second = value.find(':', first + 1);
    spec.rank = std::atoi(value.substr(first + 1, second - first - 1).c_str());
    if (second != std::string::npos) spec.iteration = std::atoll(value.substr(second + 1).c_str());
    return spec;
}

std::int64_t current_iteration = -1;

}  // namespace

void set_fault_iteration(std::int64_t iteration) { current_iteration = iteration; }

void fault_point(const char* phase, int rank) { fault_point_at(phase, rank, current_iteration); }

void fault_point_at(const char* phase, int rank, std::int64_t iteration) {
    static const FaultSpec spec = parse_spec();
    if (spec.phase.empty() || spec.phase != phase) return;
    if (spec.rank >= 0 && spec.rank != rank) return;
    if (spec.iteration >= 0 && spec.iteration != iteration) return;
    const bool hang = spec.phase.rfind("hang", 0) == 0;
    log::error("fault injection: rank {} {} at {} (iteration {})", rank, hang ? "hangs" : "dies", phase, iteration);
    if (!hang) ::kill(::getpid(), SIGKILL);
    for (;;) ::pause();
}

}  // namespace trainrt::checkpoint
