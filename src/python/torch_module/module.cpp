// trainrt._trainrt_torch: libtrainrt_torch's c10d process group (over trainrt's MPI communicator)
// as a torch.distributed ProcessGroup, for scaling.backend = trainrt (trainrt/_entry.py registers
// it with torch.distributed.Backend.register_backend). Built only with both the LibTorch and the
// Python components; imported only by jobs that ask for that backend.
#include <torch/csrc/utils/pybind.h>  // pybind11 holder support for c10::intrusive_ptr (torch's own)

#include "trainrt/torch.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_trainrt_torch, module) {
    module.doc() = "trainrt's MPI process group for torch.distributed (scaling.backend = trainrt)";
    py::module_::import("torch.distributed");  // registers the ProcessGroup type this returns
    // Collective: every rank calls it, in the same order as its other collectives.
    module.def("make_process_group", [] { return trainrt::torch::make_process_group(); });
    // What torch.distributed's registered "trainrt" backend creates (trainrt/_entry.py).
    module.def("make_backend", [] { return trainrt::torch::make_backend(); });
}
