// numpy arrays <-> trainrt checkpoint tensors (tensors.hpp).
#include "python/module/tensors.hpp"

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace py = pybind11;

namespace trainrt::python {
namespace {

Shape shape_of(const py::object& sequence) {
    Shape shape;
    for (const py::handle& extent : sequence) shape.push_back(py::cast<std::uint64_t>(extent));
    return shape;
}

void add_tensor(CheckpointState& state, const py::tuple& part) {
    const auto name = py::cast<std::string>(part[0]);
    const auto array = py::cast<py::array>(part[1]);
    const TensorType type = tensor_type_of_array(array, name);
    Shape shape(array.shape(), array.shape() + array.ndim());
    const std::size_t bytes = static_cast<std::size_t>(array.nbytes());
    const auto* data = static_cast<const std::uint8_t*>(array.data());
    // The typed span only carries the element count; CheckpointState checks it against the shape.
    auto typed = [&](auto zero) {
        using T = decltype(zero);
        std::span<const T> values(reinterpret_cast<const T*>(data), bytes / sizeof(T));
        if (py::cast<bool>(part[2]))
            state.replicated<T>(name, values, shape);
        else
            state.sharded<T>(name, values, shape_of(part[3]), shape_of(part[4]), shape);
    };
    switch (type) {
        case TensorType::f32: typed(float{}); break;
        case TensorType::f64: typed(double{}); break;
        case TensorType::i32: typed(std::int32_t{}); break;
        case TensorType::i64: typed(std::int64_t{}); break;
        case TensorType::u8: typed(std::uint8_t{}); break;
    }
}

void add_attribute(CheckpointState& state, const py::tuple& item) {
    const auto name = py::cast<std::string>(item[0]);
    const py::handle value = item[1];
    if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value))
        state.attribute(name, py::cast<std::int64_t>(value));
    else if (py::isinstance<py::float_>(value))
        state.attribute(name, py::cast<double>(value));
    else if (py::isinstance<py::str>(value))
        state.attribute(name, py::cast<std::string>(value));
    else
        throw CheckpointError(fmt::format("checkpoint: attribute '{}' must be an int, a float or a str", name));
}

}  // namespace

TensorType tensor_type_of_array(const py::array& array, const std::string& name) {
    if (!(array.flags() & py::array::c_style))
        throw CheckpointError(fmt::format("checkpoint: tensor '{}' is not C-contiguous", name));
    const py::dtype dtype = array.dtype();
    for (TensorType type : {TensorType::f32, TensorType::f64, TensorType::i32, TensorType::i64, TensorType::u8})
        if (dtype.is(dtype_of(type)) || dtype.equal(dtype_of(type))) return type;
    throw CheckpointError(fmt::format("checkpoint: tensor '{}' has dtype {}; trainrt stores float32, float64, "
                                      "int32, int64 and uint8", name, py::cast<std::string>(py::repr(dtype))));
}

py::dtype dtype_of(TensorType type) {
    switch (type) {
        case TensorType::f32: return py::dtype::of<float>();
        case TensorType::f64: return py::dtype::of<double>();
        case TensorType::i32: return py::dtype::of<std::int32_t>();
        case TensorType::i64: return py::dtype::of<std::int64_t>();
        case TensorType::u8: break;
    }
    return py::dtype::of<std::uint8_t>();
}

CheckpointState state_from(const py::object& tensors, const py::object& attributes) {
    CheckpointState state;
    if (!tensors.is_none())
        for (const py::handle& part : tensors) add_tensor(state, py::cast<py::tuple>(part));
    if (!attributes.is_none())
        for (const py::handle& item : attributes) add_attribute(state, py::cast<py::tuple>(item));
    return state;
}

}  // namespace trainrt::python
