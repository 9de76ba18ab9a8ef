#pragma once
// `launch_probe --pmi1-kvs`: speaks PMI-1 on PMI_FD itself, instead of MPI_Init, with keys whose
// names do not say which rank put them, so the PMIx launcher must find owners through its
// per-fence key indexes. Works wherever PMI_FD carries PMI-1 (the PMIx launcher, mpiexec).
#include <nlohmann/json.hpp>

#include "launch/launcher.hpp"

nlohmann::ordered_json run_pmi1_kvs_check(const trainrt::launch::LaunchInfo& info);
