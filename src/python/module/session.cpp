// trainrt._trainrt._Session: the running training function's session (trainrt/session.hpp).
// Calls that communicate release the GIL: trainrt's collectives never need Python.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <set>

#include <fmt/format.h>

#include "python/module/bindings.hpp"
#include "python/module/tensors.hpp"
#include "python/settings_view.hpp"
#include "checkpoint/write/write_plan.hpp"
#include "data/configured.hpp"
#include "trainrt/error.hpp"
#include "trainrt/threads.hpp"

namespace py = pybind11;

namespace trainrt::python {
namespace {

Session& live(const SessionHandle& handle) {
    if (handle.session == nullptr)
        throw WorkloadError("trainrt: the session is over: call report() and friends only from inside the "
                            "training function");
    return *handle.session;
}

py::dict context_dict(const Context& context) {
    py::dict out;
    out["world_rank"] = context.world_rank;
    out["world_size"] = context.world_size;
    out["local_rank"] = context.local_rank;
    out["local_world_size"] = context.local_size;
    out["node_rank"] = context.node_rank;
    out["num_nodes"] = context.num_nodes;
    out["hostname"] = context.hostname;
    out["hostnames"] = context.hostnames;
    out["job_id"] = context.job_id;
    out["restart_count"] = context.restart_count;
    out["launcher"] = context.launcher;
    out["run_dir"] = context.run_dir;
    out["gpu_device"] = context.gpu_device;
    return out;
}

// Metrics from Python: int, float or str values (trainrt/__init__.py normalizes numpy and torch
// scalars before they get here).
Metrics metrics_from(const py::dict& values) {
    Metrics metrics;
    for (const auto& [key, value] : values) {
        const std::string name = py::cast<std::string>(key);
        if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value))
            metrics.set(name, py::cast<std::int64_t>(value));
        else if (py::isinstance<py::float_>(value))
            metrics.set(name, py::cast<double>(value));
        else if (py::isinstance<py::str>(value))
            metrics.set(name, py::cast<std::string>(value));
        else
            throw WorkloadError(fmt::format("report(): metric '{}' is a {}; give a number or a string", name,
                                            py::str(py::type::of(value).attr("__name__")).cast<std::string>()));
    }
    return metrics;
}

// Whether every block a background snapshot copies after report() returns is one of `private_names`.
bool late_blocks_private(const CheckpointState& state, const std::set<std::string>& private_names) {
    for (const TensorPart& part : state.tensors())
        if (part.bytes() >= checkpoint::kBackgroundBlockBytes && !private_names.contains(part.name)) return false;
    return true;
}

// True when the caller must keep `tensors` alive until the next report() with a checkpoint or
// await_snapshot(): arrays that view the function's state may change or go when this returns, so
// a background snapshot ([checkpoint] snapshot) of them is awaited here, as with snapshot = copy;
// private copies nothing else holds (private_names: trainrt.torch's pinned staging of CUDA
// tensors) are copied beside the next steps instead.
bool report(const SessionHandle& handle, const py::dict& values, const py::object& tensors,
            const py::object& attributes, const std::set<std::string>& private_names) {
    Session& session = live(handle);
    const Metrics metrics = metrics_from(values);
    if (tensors.is_none() && attributes.is_none()) {
        py::gil_scoped_release unlocked;
        session.report(metrics);
        return false;
    }
    const CheckpointState state = state_from(tensors, attributes);  // borrows the arrays' data
    const bool deferred = late_blocks_private(state, private_names);
    py::gil_scoped_release unlocked;
    session.report(metrics, state);
    if (!deferred) session.await_snapshot();
    return deferred;
}

// Session::save_at_stop of a Python checkpoint's parts; whether its copy was left to finish
// beside the caller (as report()'s).
bool save_at_stop(const SessionHandle& handle, const py::object& tensors, const py::object& attributes,
                  const std::set<std::string>& private_names) {
    Session& session = live(handle);
    const CheckpointState state = state_from(tensors, attributes);  // borrows the arrays' data
    const bool deferred = late_blocks_private(state, private_names);
    py::gil_scoped_release unlocked;
    session.save_at_stop(state);
    if (!deferred) session.await_snapshot();
    return deferred;
}

py::dict dataset_shard(const SessionHandle& handle, const std::string& split, std::uint64_t epoch) {
    DatasetShard shard;
    {
        py::gil_scoped_release unlocked;
        shard = live(handle).dataset_shard(split, epoch);
    }
    std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(shard.count)};
    for (std::size_t d : shard.sample_shape) shape.push_back(static_cast<py::ssize_t>(d));
    py::array_t<std::uint8_t> features(shape);
    std::memcpy(features.mutable_data(), shard.features.data(), shard.features.size());
    py::dict out;
    out["features"] = features;
    out["labels"] = py::array_t<std::uint8_t>(static_cast<py::ssize_t>(shard.labels.size()), shard.labels.data());
    out["indices"] = py::array_t<std::uint64_t>(static_cast<py::ssize_t>(shard.indices.size()), shard.indices.data());
    out["padded"] = shard.padded;
    out["global_count"] = shard.global_count;
    return out;
}

// A Python shuffle argument as data.shuffle's words: True/False, None, or a word.
std::string shuffle_word(const py::handle& value) {
    if (value.is_none()) return name_of(Shuffle::none);
    if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
    return py::str(value).cast<std::string>();
}

// iter_batches' options, resolved in one place: `per_worker` samples per rank (Ray's batch size),
// the [data] settings for what the call leaves out (`given` holds what it set), the shuffle words'
// aliases; returned as the dict the dataset binding reads and state_dict() records.
py::dict iter_options(const SessionHandle& handle, const std::string& split, std::int64_t per_worker,
                      const py::dict& given) {
    Session& session = live(handle);
    const DataSettings settings = DataSettings::read(session.config());
    BatchOptions options = data::batch_options(settings, split,
                                               static_cast<std::size_t>(per_worker * session.context().world_size));
    if (given.contains("shuffle")) options.shuffle = data::shuffle_from(shuffle_word(given["shuffle"]), "iter_batches");
    if (given.contains("prefetch_batches")) options.prefetch_batches = given["prefetch_batches"].cast<std::size_t>();
    if (given.contains("shuffle_buffer")) options.shuffle_buffer = given["shuffle_buffer"].cast<std::size_t>();
    py::dict out;
    out["batch_size"] = options.batch_size;
    out["drop_last"] = given.contains("drop_last") && given["drop_last"].cast<bool>();
    out["pad"] = false;
    out["prefetch_batches"] = options.prefetch_batches;
    out["shuffle"] = name_of(options.shuffle);
    out["shuffle_buffer"] = options.shuffle_buffer;
    out["columns"] = given.contains("columns") ? py::object(given["columns"]) : py::none();
    return out;
}

// Collective: rank `root`'s bytes on every rank (the torch.distributed rendezvous address).
py::bytes broadcast_bytes(const SessionHandle& handle, const py::bytes& value, int root) {
    Communicator& comm = live(handle).communicator();
    std::string data = value;
    {
        py::gil_scoped_release unlocked;
        std::uint64_t size = data.size();
        comm.broadcast(&size, sizeof size, root);
        data.resize(size);
        comm.broadcast(data.data(), size, root);
    }
    return py::bytes(data);
}

ReduceOp reduce_op(const std::string& name) {
    if (name == "sum") return ReduceOp::sum;
    if (name == "mean") return ReduceOp::mean;
    if (name == "max") return ReduceOp::max;
    if (name == "min") return ReduceOp::min;
    throw WorkloadError(fmt::format("trainrt.allreduce(): op '{}'; use sum, mean, max or min", name));
}

// Collective, in place: a C-contiguous float32, float64 or int64 array, over trainrt's communicator.
void allreduce(const SessionHandle& handle, py::array& array, const std::string& op) {
    DType dtype = DType::f32;
    if (array.dtype().equal(py::dtype::of<double>()))
        dtype = DType::f64;
    else if (array.dtype().equal(py::dtype::of<std::int64_t>()))
        dtype = DType::i64;
    else if (!array.dtype().equal(py::dtype::of<float>()))
        throw WorkloadError("trainrt.allreduce(): give a float32, float64 or int64 numpy array");
    if (!(array.flags() & py::array::c_style) || !array.writeable())
        throw WorkloadError("trainrt.allreduce(): the array must be C-contiguous and writeable");
    Communicator& comm = live(handle).communicator();
    const ReduceOp reduce = reduce_op(op);
    void* data = array.mutable_data();
    const auto count = static_cast<std::size_t>(array.size());
    py::gil_scoped_release unlocked;
    comm.allreduce(data, count, dtype, reduce);
}

// Collective: Session::may_end_at, without the GIL while the ranks agree.
bool may_end_at(const SessionHandle& handle, const py::dict& metrics) {
    Session& session = live(handle);
    const Metrics row = metrics_from(metrics);
    py::gil_scoped_release unlocked;
    return session.may_end_at(row);
}

}  // namespace

void bind_session(py::module_& module) {
    py::class_<SessionHandle>(module, "_Session")
        .def("context", [](const SessionHandle& h) { return context_dict(live(h).context()); })
        .def("settings", [](const SessionHandle& h) { return settings_view(live(h).config()); })
        .def("setting_keys", [](const SessionHandle& h) { return settings_view(live(h).config(), true); })
        .def("train_config", [](const SessionHandle& h) { return train_config(live(h).config()); })
        .def("report", &report, py::arg("metrics"), py::arg("tensors") = py::none(),
             py::arg("attributes") = py::none(), py::arg("private_names") = std::set<std::string>{})
        .def("save_at_stop", &save_at_stop, py::arg("tensors"), py::arg("attributes"),
             py::arg("private_names") = std::set<std::string>{})
        .def("await_snapshot", [](const SessionHandle& h) {
            Session& session = live(h);
            py::gil_scoped_release unlocked;
            session.await_snapshot();
        })
        .def("should_stop", [](const SessionHandle& h) {
            Session& session = live(h);
            py::gil_scoped_release unlocked;
            return session.should_stop();
        })
        .def("checkpoint_due", [](const SessionHandle& h) { return live(h).checkpoint_due(); })
        .def("may_end_at", &may_end_at, py::arg("metrics"))
        .def("checkpoint", [](const SessionHandle& h) -> py::object {
            const Checkpoint* restored = live(h).checkpoint();
            return restored != nullptr ? py::cast(*restored) : py::none();
        })
        .def("dataset_shard", &dataset_shard, py::arg("split"), py::arg("epoch"))
        .def("dataset", [](const SessionHandle& h, const std::string& split) { return live(h).dataset(split); })
        .def("iter_options", &iter_options, py::arg("split"), py::arg("per_worker"), py::arg("given"))
        .def("allreduce", &allreduce, py::arg("array"), py::arg("op") = "mean")
        .def("broadcast_bytes", &broadcast_bytes, py::arg("value"), py::arg("root") = 0)
        .def("set_compute_threads", [](const SessionHandle& h) { return set_blas_threads(live(h).context()); })
        .def("end", [](SessionHandle& h) { h.session = nullptr; });
    module.def("_session", [](const py::capsule& capsule) {
        if (std::strcmp(capsule.name(), "trainrt.Session") != 0)
            throw WorkloadError("trainrt: _session() takes the capsule trainrt's embedding passes");
        return SessionHandle{static_cast<Session*>(capsule.get_pointer())};
    });
}

}  // namespace trainrt::python
