#pragma once
// numpy arrays <-> trainrt checkpoint tensors (trainrt/checkpoint.hpp).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "trainrt/checkpoint.hpp"

namespace trainrt::python {

// The tensor type of a C-contiguous array of float32, float64, int32, int64 or uint8;
// CheckpointError naming `name` otherwise (trainrt/checkpoint.py converts other dtypes first).
TensorType tensor_type_of_array(const pybind11::array& array, const std::string& name);
pybind11::dtype dtype_of(TensorType type);

// A CheckpointState from trainrt/checkpoint.py's parts:
//   tensors: [(name, array, replicated, global_shape, offset)], attributes: [(name, int|float|str)].
// The state borrows the arrays' data: keep `tensors` alive while it is used.
CheckpointState state_from(const pybind11::object& tensors, const pybind11::object& attributes);

}  // namespace trainrt::python
