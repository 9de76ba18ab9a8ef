// trainrt._trainrt.log(level, text, once): Python's lines through trainrt's one logger, tagged
// "[trainrt R]" like the C++ ones and filtered by [log] level.
#include <string>

#include "log/log.hpp"
#include "python/module/bindings.hpp"
#include "trainrt/error.hpp"

namespace trainrt::python {

namespace {

log::Level level_named(const std::string& name) {
    if (name == "debug") return log::Level::debug;
    if (name == "info") return log::Level::info;
    if (name == "warning") return log::Level::warn;
    if (name == "error") return log::Level::error;
    throw ConfigError("trainrt._trainrt.log: level is debug, info, warning or error, not '" + name + "'");
}

}  // namespace

void bind_log(pybind11::module_& module) {
    module.def(
        "log",
        [](const std::string& level, const std::string& text, bool once) {
            const log::Level named = level_named(level);
            if (log::level() > named) return;
            if (once) log::write_once(named, text);
            else log::write(named, text);
        },
        pybind11::arg("level"), pybind11::arg("text"), pybind11::arg("once") = false,
        "One line through trainrt's logger; once: rank 0 alone (a line every rank reaches alike).");
}

}  // namespace trainrt::python
