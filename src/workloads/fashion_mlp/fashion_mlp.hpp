#pragma once
// fashion_mlp: Ray Train's FashionMNIST parity recipe (see README "The main job").
#include "workloads/registry.hpp"

namespace trainrt::workloads::fashion_mlp {

Workload workload();

}  // namespace trainrt::workloads::fashion_mlp
