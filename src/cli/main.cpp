// trainrt: Ray Train's experience for Slurm clusters. See docs/.
#include <exception>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "runtime/run_main.hpp"
#include "supervise/supervise_main.hpp"

int main(int argc, char** argv) {
    return trainrt::runtime::guarded([&] {
        const std::string command = argc > 1 ? argv[1] : "";
        if (command == "data") return trainrt::cli::data_command(argc - 1, argv + 1);
        if (command == "checkpoints") return trainrt::cli::checkpoints_command(argc - 1, argv + 1);
        if (command == "results") return trainrt::cli::results_command(argc - 1, argv + 1);
        if (command == "tune") return trainrt::cli::tune_command(argc - 1, argv + 1);
        if (command == "plot") return trainrt::cli::plot_command(argc - 1, argv + 1);
        if (command == "supervise") return trainrt::supervise::supervise_main(argc - 1, argv + 1);
        return trainrt::cli::run_command(argc, argv);
    });
}
