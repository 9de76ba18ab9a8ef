#include "cli/commands.hpp"
#include "trainrt/error.hpp"

namespace trainrt::cli {

int plot_command(int, const char* const[]) { throw ConfigError("trainrt plot: not built yet"); }

}  // namespace trainrt::cli
