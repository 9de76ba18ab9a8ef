// trainrt._trainrt.ini: the INI files the Python driver writes (tune.Tuner's base.ini and
// sweep.ini), made from {section: {key: value}} and checked against the settings' one declaration
// (config/settings.hpp, tune/sweep_config.hpp), so that the Python package names keys in dicts and
// a key C++ no longer declares is a ValueError in Python, never a dead line in a file.
#include <pybind11/pybind11.h>

#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "config/settings.hpp"
#include "config/values.hpp"
#include "python/module/bindings.hpp"
#include "trainrt/error.hpp"
#include "trainrt/keys.hpp"
#include "tune/sweep_config.hpp"

namespace py = pybind11;

namespace trainrt::python {
namespace {

// One kind of file: the keys it declares ("section.key"), the one section whose keys are free
// (checked when the file is read), and where a user finds its keys.
struct FileKind {
    std::vector<OptionSpec> specs;
    std::string free_section;
    std::string listing;
};

// A job file: the built-in sections, and [train] free (a Python function's config, checked by it).
FileKind job_file() { return {config::builtin_options(), kTrainSection, "`trainrt --help` lists them"}; }

// A sweep file: [tune] (its three key lists), and [space] free (domains, which `trainrt tune`
// checks against the base job; the section read_sweep_file in tune/sweep_config.cpp reads).
FileKind sweep_file() { return {tune::tune_options(), "space", "`trainrt tune --help` lists them"}; }

// Whether `text` reads back as itself from a line `key = text`: Boost's INI reader ends a value
// at '#' (a comment) and at the line's end, and trims the spaces around it.
bool storable_text(const std::string& text) {
    if (text.find_first_of("#\r\n") != std::string::npos) return false;
    return text.empty() || (!std::isspace(static_cast<unsigned char>(text.front())) &&
                            !std::isspace(static_cast<unsigned char>(text.back())));
}

// A Python bool, int, float or str (subclasses included) as the text C++'s reader parses back to
// it (config/values.hpp): true/false, the integer, the float's shortest round-trip repr (an
// integral one as an integer for an integer key), the string as is; nullopt for any other type.
std::optional<std::string> text_of(const py::handle& value, ValueKind kind) {
    if (PyBool_Check(value.ptr())) return std::string(value.ptr() == Py_True ? "true" : "false");
    if (PyLong_Check(value.ptr()))
        return py::str(py::reinterpret_steal<py::object>(PyNumber_Long(value.ptr()))).cast<std::string>();
    if (PyFloat_Check(value.ptr())) {
        const double number = PyFloat_AsDouble(value.ptr());
        if (kind == ValueKind::integer && std::isfinite(number) && number == std::floor(number) &&
            std::fabs(number) < 9e15)
            return fmt::format("{}", static_cast<long long>(number));
        return py::repr(py::float_(number)).cast<std::string>();
    }
    if (PyUnicode_Check(value.ptr())) return value.cast<std::string>();
    return std::nullopt;
}

// `value` of `key` as its line's text, checked against `spec` when the key is declared (type,
// bounds, choices: config::check_value, normalised as it normalises). TypeError for a value of
// another type, ValueError for one the file cannot hold or the declaration refuses.
std::string value_text(const py::handle& value, const OptionSpec* spec, const std::string& key) {
    const std::optional<std::string> text = text_of(value, spec ? spec->kind : ValueKind::string);
    if (!text)
        throw py::type_error(fmt::format("trainrt: {} = {}: an INI value is a bool, int, float or str", key,
                                         py::repr(value).cast<std::string>()));
    if (!storable_text(*text))
        throw py::value_error(fmt::format("trainrt: {} = '{}': an INI value holds no '#' or line break and no "
                                          "spaces at its ends", key, *text));
    if (spec == nullptr) return *text;
    try {
        return config::check_value(*spec, *text, "given in Python");
    } catch (const ConfigError& error) {
        throw py::value_error(error.what());
    }
}

// The keys `file` declares in `section`, as its lines spell them ("asha.max_t" in [tune]); ValueError
// naming the sections it holds for one it has not (the free section has no declared keys: any).
std::vector<std::string> section_keys(const FileKind& file, const std::string& section) {
    std::vector<std::string> names;
    std::string sections;
    for (const OptionSpec& spec : file.specs) {
        if (spec.key.rfind(section + ".", 0) == 0) names.push_back(spec.key.substr(section.size() + 1));
        const std::string held = "[" + spec.key.substr(0, spec.key.find('.')) + "], ";
        if (sections.find(held) == std::string::npos) sections += held;
    }
    if (!names.empty() || section == file.free_section) return names;
    throw py::value_error(fmt::format("trainrt: unknown section [{}]: the file holds {}[{}]; {}", section, sections,
                                      file.free_section, file.listing));
}

// The declaration of `section`.`name` among `file`'s; ValueError naming the key (and a close one) else.
const OptionSpec& declared(const FileKind& file, const std::string& section, const std::string& name,
                           const std::vector<std::string>& names) {
    const std::string key = section + "." + name;
    for (const OptionSpec& spec : file.specs)
        if (spec.key == key) return spec;
    const std::string close = config::closest_match(name, names);
    throw py::value_error(fmt::format("trainrt: unknown key '{}' in [{}] ({}){}; {}", name, section, key,
                                      close.empty() ? "" : fmt::format(": did you mean '{}'?", close), file.listing));
}

// A key as its line spells it: a str, readable back as itself and not mistaken for a section.
std::string key_text(const py::handle& key, const std::string& section) {
    if (!PyUnicode_Check(key.ptr()))
        throw py::type_error(fmt::format("trainrt: [{}] key {}: a key is a str", section,
                                         py::repr(key).cast<std::string>()));
    const std::string text = key.cast<std::string>();
    if (text.empty() || !storable_text(text) || text.find_first_of("=[]") != std::string::npos)
        throw py::value_error(fmt::format("trainrt: [{}] key '{}': not a key an INI line can hold", section, text));
    return text;
}

// The lines of one section (its header left to the caller); a None value is left out, so that
// the reader applies its declared default.
std::string section_lines(const std::string& section, const py::handle& keys, const FileKind& file) {
    if (!PyDict_Check(keys.ptr()))
        throw py::type_error(fmt::format("trainrt: [{}]: a section is a dict of key: value", section));
    const bool free = section == file.free_section;
    const std::vector<std::string> names = section_keys(file, section);
    std::string lines;
    for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(keys)) {
        const std::string name = key_text(key, section);
        const OptionSpec* spec = free ? nullptr : &declared(file, section, name, names);
        if (value.is_none()) continue;
        lines += name + " = " + value_text(value, spec, section + "." + name) + "\n";
    }
    return lines;
}

// The file's text: its sections in the dict's order, each with a line per value given; a section
// with none is left out.
std::string file_text(const py::dict& sections, const FileKind& file) {
    std::string text;
    for (const auto& [section, keys] : sections) {
        if (!PyUnicode_Check(section.ptr()))
            throw py::type_error("trainrt: a section's name is a str");
        const std::string name = section.cast<std::string>();
        const std::string lines = section_lines(name, keys, file);
        if (!lines.empty()) text += "[" + name + "]\n" + lines;
    }
    return text;
}

}  // namespace

void bind_ini(py::module_& module) {
    py::module_ ini = module.def_submodule("ini", "the INI files the Python driver writes (C++ declares their keys)");
    ini.def("job", [](const py::dict& sections) { return file_text(sections, job_file()); }, py::arg("sections"),
            "a job file's text from {section: {key: value}}: every key declared (config/settings.hpp) but "
            "[train]'s, every value checked; None values left out. ValueError for an unknown key or bad value");
    ini.def("sweep", [](const py::dict& sections) { return file_text(sections, sweep_file()); }, py::arg("sections"),
            "a sweep file's text from {\"tune\": {key: value}, \"space\": {key: domain text}}: every [tune] key "
            "declared (tune/sweep_config.hpp), every value checked; None values left out. ValueError for an "
            "unknown key or bad value");
    ini.def("storable", [](const py::handle& value) {
                const std::optional<std::string> text = text_of(value, ValueKind::string);
                return text.has_value() && storable_text(*text);
            }, py::arg("value"),
            "whether a free value ([train]'s) is a bool, int, float or str that an INI line holds as itself");
}

}  // namespace trainrt::python
