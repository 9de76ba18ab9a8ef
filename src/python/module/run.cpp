// trainrt.run() from Python (the twin of trainrt::run in C++, run.hpp), and the one way a Python
// training function is run under a session: trainrt/_entry.py's run_function, whose verdict
// becomes the trainrt error that ends the run.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <utility>

#include "config/install_layout.hpp"
#include "config/loader.hpp"
#include "config/settings.hpp"
#include "launch/launcher.hpp"
#include "launch/step_command.hpp"
#include "python/failure.hpp"
#include "python/module/bindings.hpp"
#include "python/settings_view.hpp"
#include "runtime/run_main.hpp"
#include "trainrt/threads.hpp"
#include "workloads/registry.hpp"

namespace py = pybind11;

namespace trainrt::python {

void run_python_function(Session& session, const py::object& function) {
    const py::object entry = py::module_::import("trainrt._entry");
    throw_on_failure(entry.attr("run_function")(py::cast(SessionHandle{&session}), function));
}

namespace {

// The process exit code (docs/reference/exit-codes.md). Python code runs on this (the main) thread, which
// holds the GIL only while it does: trainrt's collectives around the function (a stop's last
// agreement) must not freeze the function's Python threads (XGBoost's tracker serves the other
// ranks' shutdown). `settings`: {key: (value, source)} the script gives in code (Ray's RunConfig
// & co.), below its command line (config/loader.hpp).
// `reads`: the train.* keys the function's own config holds (Ray's train_loop_config), named only.
int run_from_python(const std::vector<std::string>& argv, const py::object& function, const std::string& name,
                    const std::map<std::string, std::pair<std::string, std::string>>& settings,
                    const std::vector<std::string>& reads) {
    std::vector<const char*> args;
    for (const std::string& arg : argv) args.push_back(arg.c_str());
    args.push_back(nullptr);
    config::ProgramSettings program;
    for (const std::string& key : reads) program[key] = config::named_only("the function's train_loop_config");
    for (const auto& [key, value] : settings) program[key] = ConfigValue{value.first, value.second};
    py::gil_scoped_release unlocked;
    return runtime::run_embedded(static_cast<int>(argv.size()), args.data(),
                                 [&function](Session& session) {
                                     py::gil_scoped_acquire locked;
                                     run_python_function(session, function);
                                 },
                                 name.c_str(), nullptr, program);
}

// The signals that request a stop ([stop] signals) of the job that `argv` and the script's own
// `settings` describe, resolved as its ranks will resolve them: fit()'s driver passes these on to
// the ranks' launcher and outlives them. ConfigError for a bad configuration, said once here.
std::vector<int> stop_signals(const std::vector<std::string>& argv,
                              const std::map<std::string, std::pair<std::string, std::string>>& settings) {
    std::vector<const char*> args;
    for (const std::string& arg : argv) args.push_back(arg.c_str());
    args.push_back(nullptr);
    config::ProgramSettings program;
    for (const auto& [key, value] : settings) program[key] = ConfigValue{value.first, value.second};
    const config::Loaded loaded =
        config::load(static_cast<int>(argv.size()), args.data(), workloads::all_workload_keys(), "driver", program);
    return StopSettings::read(loaded.config).signals.value.numbers;
}

// Who launched this process (launch/launcher.hpp's rule): (mode, Slurm job id). mode "single"
// with a job id: a batch script inside an allocation, no step yet.
std::pair<std::string, std::string> launcher() {
    const launch::EnvLookup env = launch::process_env();
    launch::LaunchInfo info;
    launch::read_slurm_job(env, info);
    return {launch::mode_name(launch::detect_mode(env)), info.job_id};
}

}  // namespace

void bind_run(py::module_& module) {
    module.def("run", &run_from_python, py::arg("argv"), py::arg("function"), py::arg("name"),
               py::arg("settings") = std::map<std::string, std::pair<std::string, std::string>>{},
               py::arg("reads") = std::vector<std::string>{});
    module.def("launcher", &launcher);
    module.def("stop_signals", &stop_signals, py::arg("argv"),
               py::arg("settings") = std::map<std::string, std::pair<std::string, std::string>>{});
    module.def("usable_cpus", &usable_cpus, "the CPUs this process may run on (its affinity mask)");
    module.def(
        "step_command",
        [](const std::string& launcher, int ranks) {
            return launch::step_command(launch::step_launcher_named(launcher), {ranks});
        },
        py::arg("launcher"), py::arg("ranks"), "the command line that starts `ranks` ranks (launch/step_command.hpp)");
    module.def("binary", &config::binary_path);  // the trainrt program beside this module's libtrainrt
    // The built-in keys' names outside a session (keys.run.name == "run.name"): the driver side
    // (trainrt.RunConfig & co.) turns Ray's objects into settings by these names.
    module.def("setting_keys", [] {
        return settings_view(keys_detail::defaults_of(config::builtin_options()), true);
    });
}

}  // namespace trainrt::python
