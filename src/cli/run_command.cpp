#include "cli/commands.hpp"
#include "cli/tracking_export.hpp"
#include "runtime/run_end_hook.hpp"
#include "runtime/run_main.hpp"

namespace trainrt::cli {

int run_command(int argc, const char* const argv[]) {
    runtime::set_run_end_hook(export_at_run_end);  // [tracking]
    return runtime::run_main(argc, argv, nullptr);
}

}  // namespace trainrt::cli
