#pragma once
// What Python code sees of the job's configuration, typed by its one declaration
// (config/settings.hpp): trainrt.get_settings() and the runner read built-in settings from here,
// trainrt.get_config() the [train] section; no default and no key is written in Python. Inline:
// the embedding (python_workload.cpp) and the extension module both hand it to Python.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "config/settings.hpp"

namespace trainrt::python {
namespace settings_detail {

namespace py = pybind11;

template <class T> inline py::object to_python(const T& value) {
    if constexpr (std::is_enum_v<T>) return py::str(name_of(value));
    else return py::cast(value);
}
template <class T> inline py::object to_python(const std::optional<T>& value) {
    return value ? to_python(*value) : py::none();
}
inline py::object to_python(const SignalList& signals) { return py::cast(signals.names); }
inline py::object to_python(const SecondsOrAuto& margin) { return to_python(margin.seconds); }

inline py::object name_space(const py::dict& values) {
    return py::module_::import("types").attr("SimpleNamespace")(**values);
}

// A section as a namespace of its keys' typed values (settings.scaling.backend == "auto"), or of
// their names (keys.scaling.backend == "scaling.backend", for messages).
template <class Section> py::object section_view(const Section& section, bool names) {
    py::dict values;
    section.visit([&](const char* name, const auto& setting) {
        values[name] = names ? py::str(setting.key) : to_python(setting.value);
    });
    return name_space(values);
}

// A [train] value a workload did not declare, as what it looks like: bool, int, float, else str.
inline py::object guessed(const std::string& text) {
    if (text == "true" || text == "false") return py::bool_(text == "true");
    std::size_t used = 0;
    try {
        const long long integer = std::stoll(text, &used);
        if (used == text.size()) return py::int_(integer);
    } catch (const std::exception&) {
    }
    try {
        const double real = std::stod(text, &used);
        if (used == text.size()) return py::float_(real);
    } catch (const std::exception&) {
    }
    return py::str(text);
}

}  // namespace settings_detail

// The built-in settings, typed: settings.failure.peer_timeout == 60.0. `names`: the keys instead.
inline pybind11::object settings_view(const JobConfig& config, bool names = false) {
    pybind11::dict sections;
    Settings::read(config).visit([&](const char* name, const auto& section) {
        sections[name] = settings_detail::section_view(section, names);
    });
    return settings_detail::name_space(sections);
}

// The [train] section without its prefix (Ray's train_loop_config), typed as its values look.
inline pybind11::dict train_config(const JobConfig& config) {
    namespace py = pybind11;
    const std::string prefix = std::string(kTrainSection) + ".";
    py::dict out;
    for (const auto& [key, value] : config.values())
        if (key.rfind(prefix, 0) == 0) out[py::str(key.substr(prefix.size()))] = settings_detail::guessed(value.value);
    return out;
}

}  // namespace trainrt::python
