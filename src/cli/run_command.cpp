#include "cli/commands.hpp"
#include "runtime/run_main.hpp"

namespace trainrt::cli {

int run_command(int argc, const char* const argv[]) { return runtime::run_main(argc, argv, nullptr); }

}  // namespace trainrt::cli
