// How the bindings report a failed Status to Python: onnxsurgeon.OnnxSurgeonError (a
// ValueError), registered once when the module loads (bindings.cc).
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "core/ir/status.h"

namespace onnxsurgeon::bindings {

inline PyObject*& ErrorType() {
  static PyObject* type = nullptr;
  return type;
}

[[noreturn]] inline void Raise(const absl::Status& s) {
  PyErr_SetString(ErrorType(), std::string(s.message()).c_str());
  throw pybind11::error_already_set();
}

template <typename T>
T Unwrap(absl::StatusOr<T> v) {
  if (!v.ok()) Raise(v.status());
  return *std::move(v);
}

inline void Check(const absl::Status& s) {
  if (!s.ok()) Raise(s);
}

}  // namespace onnxsurgeon::bindings
