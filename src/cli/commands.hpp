#pragma once
// Subcommands of the trainrt binary. Each returns the process exit code.
namespace trainrt::cli {

int run_command(int argc, const char* const argv[]);   // trainrt --config FILE ...
int data_command(int argc, const char* const argv[]);  // trainrt data import ...
int checkpoints_command(int argc, const char* const argv[]);  // trainrt checkpoints [verify] DIR
int results_command(int argc, const char* const argv[]);  // trainrt results RUN_DIR [--json|--csv]
int plot_command(int argc, const char* const argv[]);     // trainrt plot RUN_DIR -o FILE.png
int tune_command(int argc, const char* const argv[]);     // trainrt tune --config SWEEP.ini

}  // namespace trainrt::cli
