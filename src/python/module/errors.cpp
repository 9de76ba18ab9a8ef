// trainrt's errors in Python: trainrt._trainrt.Error (a RuntimeError) with the C++ error's message
// and its exit code (docs/reference/exit-codes.md) as `exit_code`, so a failure that started in trainrt
// (a checkpoint that could not be written, a collective that failed) ends the run with its code.
#include <pybind11/pybind11.h>

#include <string>

#include "python/module/bindings.hpp"
#include "trainrt/error.hpp"

namespace py = pybind11;

namespace trainrt::python {

void bind_errors(py::module_& module) {
    py::dict codes;  // trainrt.exit_codes.workload == 7: the one table (trainrt/error.hpp)
    for (const ExitCodeName& entry : exit_code_table())
        if (std::string(entry.table) == "exit") codes[entry.name] = entry.code;
    module.attr("exit_codes") = py::module_::import("types").attr("SimpleNamespace")(**codes);
    // Never destroyed: the interpreter is never finalized, and a static's destructor would drop
    // the type's reference at exit without the GIL.
    static auto* error_type = new py::exception<Error>(module, "Error", PyExc_RuntimeError);
    py::register_exception_translator([](std::exception_ptr raised) {
        try {
            if (raised) std::rethrow_exception(raised);
        } catch (const Error& error) {
            py::object instance = py::reinterpret_borrow<py::object>(error_type->ptr())(error.what());
            instance.attr("exit_code") = error.exit_code();
            PyErr_SetObject(error_type->ptr(), instance.ptr());
        }
    });
}

}  // namespace trainrt::python
