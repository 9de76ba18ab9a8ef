// trainrt: Ray Train's experience for Slurm clusters. See README.md.
#include <exception>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "storage/posix.hpp"
#include "trainrt/error.hpp"

int main(int argc, char** argv) {
    try {
        if (argc > 1 && std::string(argv[1]) == "data")
            return trainrt::cli::data_command(argc - 1, argv + 1);
        if (argc > 1 && std::string(argv[1]) == "checkpoints")
            return trainrt::cli::checkpoints_command(argc - 1, argv + 1);
        if (argc > 1 && std::string(argv[1]) == "results")
            return trainrt::cli::results_command(argc - 1, argv + 1);
        if (argc > 1 && std::string(argv[1]) == "plot")
            return trainrt::cli::plot_command(argc - 1, argv + 1);
        return trainrt::cli::run_command(argc, argv);
    } catch (const trainrt::Error& error) {
        trainrt::storage::write_stderr_line(std::string("trainrt: ") + error.what());
        return error.exit_code();
    } catch (const std::exception& error) {
        trainrt::storage::write_stderr_line(std::string("trainrt: internal error: ") + error.what());
        return 1;
    }
}
