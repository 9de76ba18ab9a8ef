#include "cli/commands.hpp"
#include "trainrt/error.hpp"

namespace trainrt::cli {

int results_command(int, const char* const[]) { throw ConfigError("trainrt results: not built yet"); }

}  // namespace trainrt::cli
