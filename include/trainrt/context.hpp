#pragma once
// Who this process is in the job: the launcher's view, checked against MPI's at start-up.
#include <string>
#include <vector>

namespace trainrt {

struct Context {
    int world_rank = 0;
    int world_size = 1;
    int local_rank = 0;   // rank among the processes on this node
    int local_size = 1;
    int node_rank = 0;    // index of this node in `hostnames`
    int num_nodes = 1;
    std::string hostname;                 // this process's node
    std::vector<std::string> hostnames;   // one per node, by node rank
    std::string job_id;                   // Slurm job id, empty outside Slurm
    int restart_count = 0;                // SLURM_RESTART_COUNT (0 on the first run)
    std::string launcher;                 // pmix | pmi | slurm | single
    std::string run_dir;                  // <storage_path>/<name>
    int gpu_device = -1;                  // the CUDA device this rank bound (scaling.use_gpu); -1 on CPU
};

}  // namespace trainrt
