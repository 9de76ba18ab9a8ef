// trainrt._trainrt._Dataset and _BatchIterator: session.dataset(split) for Python (trainrt/data.hpp).
// A batch reaches Python as a dict of numpy arrays that own their data (copied from the reader's
// batch, which is recycled at the next call); next() releases the GIL while it waits.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "data/configured.hpp"
#include "data/dataset_file.hpp"
#include "data/import/importers.hpp"
#include "data/stream.hpp"
#include "python/module/bindings.hpp"
#include "trainrt/error.hpp"

namespace py = pybind11;

namespace trainrt::python {
namespace {

py::dtype dtype_of(ColumnType type) {
    switch (type) {
        case ColumnType::u8: return py::dtype("uint8");
        case ColumnType::i8: return py::dtype("int8");
        case ColumnType::i16: return py::dtype("int16");
        case ColumnType::i32: return py::dtype("int32");
        case ColumnType::i64: return py::dtype("int64");
        case ColumnType::f16: return py::dtype("float16");
        case ColumnType::f32: return py::dtype("float32");
        case ColumnType::f64: return py::dtype("float64");
    }
    return py::dtype("uint8");
}

py::array to_array(const BatchColumn& column) {
    std::vector<py::ssize_t> shape(column.shape().begin(), column.shape().end());
    py::array array(dtype_of(column.type()), shape);
    std::memcpy(array.mutable_data(), column.data(), column.bytes());
    return array;
}

class PyBatchIterator {
public:
    explicit PyBatchIterator(BatchIterator iterator) : iterator_(std::move(iterator)) {}
    py::dict next() {
        const Batch* batch = nullptr;
        {
            py::gil_scoped_release unlocked;
            batch = iterator_.next();
        }
        if (batch == nullptr) throw py::stop_iteration();
        py::dict out;
        for (const std::string& name : batch->column_names()) out[py::str(name)] = to_array(batch->column(name));
        last_ = {batch->index, batch->count, batch->padded};
        return out;
    }
    py::dict position() const {
        const DataPosition position = iterator_.position();
        py::dict out;
        out["epoch"] = position.epoch;
        out["next_batch"] = position.next_batch;
        return out;
    }
    std::size_t batches() const { return iterator_.batches(); }
    double wait_seconds() const { return iterator_.wait_seconds(); }
    py::dict last() const {
        py::dict out;
        out["index"] = last_.index, out["count"] = last_.count, out["padded"] = last_.padded;
        return out;
    }

private:
    struct Last {
        std::size_t index = 0, count = 0, padded = 0;
    };
    BatchIterator iterator_;
    Last last_;
};

BatchOptions options_from(const py::dict& given) {
    BatchOptions options;
    options.batch_size = given["batch_size"].cast<std::size_t>();
    options.drop_last = given["drop_last"].cast<bool>();
    options.pad = given["pad"].cast<bool>();
    options.prefetch_batches = given["prefetch_batches"].cast<std::size_t>();
    options.shuffle = data::shuffle_from(given["shuffle"].cast<std::string>(), "iter_batches");
    options.shuffle_buffer = given["shuffle_buffer"].cast<std::size_t>();
    if (!given["columns"].is_none()) options.columns = given["columns"].cast<std::vector<std::string>>();
    return options;
}

// A state_dict() saved by an iterator, checked against the order `options` read in (the one
// rule, data::check_same_order): (epoch, next_batch).
py::tuple resume_position(const Dataset& dataset, const py::dict& options, const py::dict& state) {
    const std::string saved = state.contains("order") ? py::str(state["order"]).cast<std::string>() : "";
    data::check_same_order("iter_batches: the position given as resume", saved,
                           dataset.order_key(options_from(options)));
    return py::make_tuple(state["epoch"].cast<std::int64_t>(), state["next_batch"].cast<std::int64_t>());
}

py::list column_list(const Dataset& dataset) {
    py::list out;
    for (const ColumnInfo& column : dataset.columns()) {
        py::dict info;
        info["name"] = column.name;
        info["dtype"] = column_type_name(column.type);
        info["shape"] = column.sample_shape;
        info["mean"] = column.mean;
        info["std"] = column.std;
        info["num_classes"] = column.num_classes;
        out.append(info);
    }
    return out;
}


std::optional<ColumnType> column_type_of(const py::dtype& dtype) {
    const char kind = dtype.kind();
    const auto size = dtype.itemsize();
    if (kind == 'u' && size == 1) return ColumnType::u8;
    if (kind == 'i') {
        if (size == 1) return ColumnType::i8;
        if (size == 2) return ColumnType::i16;
        if (size == 4) return ColumnType::i32;
        if (size == 8) return ColumnType::i64;
    }
    if (kind == 'f') {
        if (size == 2) return ColumnType::f16;
        if (size == 4) return ColumnType::f32;
        if (size == 8) return ColumnType::f64;
    }
    return std::nullopt;
}

// [(dataset, [(column, C-contiguous numpy array)])] into a dataset file (data::write_arrays); the
// arrays' first dimension is the row. trainrt.data converts other dtypes (bool, wider unsigned)
// before it calls this; anything else is one DataError naming the column.
void write_dataset(const std::string& out, const py::list& splits, const std::string& source) {
    std::vector<data::ArraySplit> parsed;
    std::vector<py::array> held;  // the buffers stay alive until the file is written
    for (const py::handle& entry : splits) {
        const auto pair = entry.cast<py::tuple>();
        data::ArraySplit split{pair[0].cast<std::string>(), {}};
        for (const py::handle& item : pair[1].cast<py::list>()) {
            const auto named = item.cast<py::tuple>();
            const std::string name = named[0].cast<std::string>();
            auto array = py::array::ensure(named[1], py::array::c_style);
            const auto type = array ? column_type_of(array.dtype()) : std::nullopt;
            if (!type || array.ndim() == 0)
                throw DataError(fmt::format("datasets: dataset '{}': column '{}' is not an array of numbers with a "
                                            "row dimension", split.name, name));
            std::vector<std::size_t> sample(array.shape() + 1, array.shape() + array.ndim());
            split.columns.push_back({name, *type, sample, static_cast<std::uint64_t>(array.shape(0)), array.data()});
            held.push_back(std::move(array));
        }
        parsed.push_back(std::move(split));
    }
    py::gil_scoped_release unlocked;
    data::write_arrays(out, parsed, source);
}

}  // namespace

void bind_dataset(py::module_& module) {
    py::class_<PyBatchIterator>(module, "_BatchIterator")
        .def("__iter__", [](PyBatchIterator& self) -> PyBatchIterator& { return self; })
        .def("__next__", &PyBatchIterator::next)
        .def("__len__", &PyBatchIterator::batches)
        .def_property_readonly("position", &PyBatchIterator::position)
        .def_property_readonly("wait_seconds", &PyBatchIterator::wait_seconds)
        .def_property_readonly("last", &PyBatchIterator::last);
    py::class_<Dataset>(module, "_Dataset")
        .def_property_readonly("size", &Dataset::size)
        .def_property_readonly("split", &Dataset::split)
        .def_property_readonly("path", &Dataset::path)
        .def_property_readonly("feature_column", &Dataset::feature_column)
        .def_property_readonly("label_column", &Dataset::label_column)
        .def_property_readonly("columns", &column_list)
        .def("batches", [](const Dataset& d, const py::dict& options) { return d.batches(options_from(options)); })
        .def("order_key", [](const Dataset& d, const py::dict& options) { return d.order_key(options_from(options)); })
        .def("iter_batches", [](const Dataset& d, const py::dict& options, std::int64_t epoch, std::int64_t next_batch) {
            BatchOptions parsed = options_from(options);
            return PyBatchIterator(d.iter_batches(parsed, DataPosition{epoch, next_batch}));
        })
        .def("resume_position", &resume_position, py::arg("options"), py::arg("state"));
    module.def("dataset_splits", [](const std::string& path) { return data::read_dataset_info(path).split_names(); },
               py::arg("path"));
    // Outside a run: one process sees every row of the split (rank 0 of 1); in a run, a file of the
    // run's own (Ray Data's datasets) as rank `rank` of `ranks` reads it.
    module.def("open_dataset", [](const std::string& path, const std::string& split, int rank, int ranks,
                                   std::uint64_t seed) { return data::open_dataset(path, split, rank, ranks, seed); },
               py::arg("path"), py::arg("split"), py::arg("rank") = 0, py::arg("ranks") = 1, py::arg("seed") = 0);
    module.def("write_dataset", &write_dataset, py::arg("out"), py::arg("splits"), py::arg("source"));
}

}  // namespace trainrt::python
