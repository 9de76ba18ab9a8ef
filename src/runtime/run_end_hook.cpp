#include "runtime/run_end_hook.hpp"

#include <exception>
#include <utility>

#include "log/log.hpp"

namespace trainrt::runtime {
namespace {

RunEndHook& registered() {
    static RunEndHook hook;
    return hook;
}

}  // namespace

void set_run_end_hook(RunEndHook hook) { registered() = std::move(hook); }

void call_run_end_hook(const Settings& settings, const std::string& run_dir) noexcept {
    if (!registered()) return;
    try {
        registered()(settings, run_dir);
    } catch (const std::exception& error) {
        log::warn("after the run: {}", error.what());
    } catch (...) {
        log::warn("after the run: an exception that is not a std::exception");
    }
}

}  // namespace trainrt::runtime
