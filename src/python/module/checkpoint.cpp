// trainrt._trainrt._Checkpoint: a committed checkpoint (trainrt::Checkpoint), read as numpy arrays.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "checkpoint/read/open_path.hpp"
#include "python/module/bindings.hpp"
#include "python/module/tensors.hpp"

namespace py = pybind11;

namespace trainrt::python {
namespace {

// Block [offset, offset + shape) of tensor `name` (the whole tensor when both are None).
py::array read_block(const Checkpoint& checkpoint, const std::string& name, const py::object& offset,
                     const py::object& shape) {
    const TensorType type = checkpoint.tensor_type(name);
    Shape global = checkpoint.global_shape(name);
    Shape block_offset(global.size(), 0), block_shape = global;
    if (!offset.is_none()) block_offset = py::cast<Shape>(offset);
    if (!shape.is_none()) block_shape = py::cast<Shape>(shape);
    std::vector<py::ssize_t> extents(block_shape.begin(), block_shape.end());
    py::array out(dtype_of(type), extents);
    {
        py::gil_scoped_release unlocked;
        checkpoint.read(name, type, block_offset, block_shape, out.mutable_data());
    }
    return out;
}

py::object attribute(const Checkpoint& checkpoint, const std::string& name) {
    return std::visit([](const auto& value) -> py::object { return py::cast(value); },
                      checkpoint.attribute(name));
}

}  // namespace

void bind_checkpoint(py::module_& module) {
    py::class_<Checkpoint>(module, "_Checkpoint")
        .def_property_readonly("path", &Checkpoint::path)
        .def_property_readonly("name", &Checkpoint::name)
        .def_property_readonly("iteration", &Checkpoint::iteration)
        .def_property_readonly("world_size", &Checkpoint::world_size)
        .def("tensor_names", &Checkpoint::tensor_names)
        .def("attribute_names", &Checkpoint::attribute_names)
        .def("global_shape", &Checkpoint::global_shape)
        .def("read", &read_block, py::arg("name"), py::arg("offset") = py::none(), py::arg("shape") = py::none())
        .def("attribute", &attribute);
    module.def("open_checkpoint", &checkpoint::open_verified, py::arg("path"),
               "A committed checkpoint outside a run: a checkpoint directory (verified) or a run "
               "directory (its newest valid checkpoint).");
}

}  // namespace trainrt::python
