#include "python/attributes.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>

#include "core/ir/tensor.h"

namespace py = pybind11;

namespace onnxsurgeon::python {
namespace {

using A = onnx::AttributeProto;
using T = onnx::TensorProto;

// numpy dtype <-> TensorProto data type, for the types both have.
int32_t DataTypeOf(const py::dtype& dtype) {
  char kind = dtype.kind();
  size_t size = dtype.itemsize();
  if (kind == 'f') return size == 2 ? T::FLOAT16 : size == 4 ? T::FLOAT : size == 8 ? T::DOUBLE : 0;
  if (kind == 'i') return size == 1 ? T::INT8 : size == 2 ? T::INT16 : size == 4 ? T::INT32 : size == 8 ? T::INT64 : 0;
  if (kind == 'u')
    return size == 1 ? T::UINT8 : size == 2 ? T::UINT16 : size == 4 ? T::UINT32 : size == 8 ? T::UINT64 : 0;
  if (kind == 'b') return T::BOOL;
  if (kind == 'c') return size == 8 ? T::COMPLEX64 : size == 16 ? T::COMPLEX128 : 0;
  return 0;
}

const char* NumpyTypeOf(int32_t data_type) {
  switch (data_type) {
    case T::FLOAT: return "float32";
    case T::FLOAT16: return "float16";
    case T::DOUBLE: return "float64";
    case T::INT8: return "int8";
    case T::INT16: return "int16";
    case T::INT32: return "int32";
    case T::INT64: return "int64";
    case T::UINT8: return "uint8";
    case T::UINT16: return "uint16";
    case T::UINT32: return "uint32";
    case T::UINT64: return "uint64";
    case T::BOOL: return "bool";
    case T::COMPLEX64: return "complex64";
    case T::COMPLEX128: return "complex128";
    default: return nullptr;
  }
}

// The onnx proto class name of a Python object, or "" (onnx is not imported here: a
// proto is recognised by its class and read through its serialization).
std::string ProtoName(const py::handle& v) {
  if (!py::hasattr(v, "SerializeToString") || !py::hasattr(v, "DESCRIPTOR")) return "";
  return py::str(v.attr("DESCRIPTOR").attr("full_name"));
}

template <typename Proto>
Proto ParseProto(const py::handle& v, const std::string& name) {
  Proto p;
  std::string bytes = py::bytes(v.attr("SerializeToString")());
  if (!p.ParseFromString(bytes)) throw py::value_error("attribute '" + name + "': unreadable " + ProtoName(v));
  return p;
}

bool IsArray(const py::handle& v) { return py::isinstance<py::array>(v); }

T ArrayToTensor(const py::handle& v, const std::string& name) {
  auto array = py::array::ensure(v, py::array::c_style);
  if (!array) throw py::type_error("attribute '" + name + "': not a readable array");
  int32_t data_type = DataTypeOf(array.dtype());
  if (!data_type) {
    throw py::type_error("attribute '" + name + "': numpy dtype " + std::string(py::str(array.dtype())) +
                         " has no ONNX tensor type");
  }
  T t;
  t.set_data_type(data_type);
  for (py::ssize_t i = 0; i < array.ndim(); ++i) t.add_dims(array.shape(i));
  t.set_raw_data(std::string(static_cast<const char*>(array.data()), array.nbytes()));
  return t;
}

// One element of a list attribute: which list kind it belongs to.
enum class Kind { kInt, kFloat, kString, kTensor, kSparse, kType, kOther };

Kind KindOf(const py::handle& v) {
  if (py::isinstance<py::bool_>(v) || py::isinstance<py::int_>(v)) return Kind::kInt;
  if (py::isinstance<py::float_>(v)) return Kind::kFloat;
  if (py::isinstance<py::str>(v) || py::isinstance<py::bytes>(v)) return Kind::kString;
  if (IsArray(v)) return Kind::kTensor;
  std::string proto = ProtoName(v);
  if (proto == "onnx.TensorProto") return Kind::kTensor;
  if (proto == "onnx.SparseTensorProto") return Kind::kSparse;
  if (proto == "onnx.TypeProto") return Kind::kType;
  return Kind::kOther;
}

T ToTensor(const py::handle& v, const std::string& name) {
  return IsArray(v) ? ArrayToTensor(v, name) : ParseProto<T>(v, name);
}

std::string ToBytes(const py::handle& v) {
  if (py::isinstance<py::bytes>(v)) return v.cast<std::string>();
  return v.cast<std::string>();  // str: UTF-8
}

}  // namespace

A ToAttribute(const std::string& name, const py::handle& v) {
  A a;
  std::string proto = ProtoName(v);
  if (proto == "onnx.AttributeProto") {
    a = ParseProto<A>(v, name);
    if (a.type() == A::GRAPH || a.type() == A::GRAPHS) {
      throw py::type_error("attribute '" + name + "': graph attributes cannot be set from Python");
    }
    a.set_name(name);
    return a;
  }
  if (proto == "onnx.GraphProto") {
    throw py::type_error("attribute '" + name + "': graph attributes cannot be set from Python");
  }
  a.set_name(name);
  switch (KindOf(v)) {
    case Kind::kInt:
      a.set_type(A::INT);
      a.set_i(v.cast<int64_t>());
      return a;
    case Kind::kFloat:
      a.set_type(A::FLOAT);
      a.set_f(v.cast<float>());
      return a;
    case Kind::kString:
      a.set_type(A::STRING);
      a.set_s(ToBytes(v));
      return a;
    case Kind::kTensor:
      a.set_type(A::TENSOR);
      *a.mutable_t() = ToTensor(v, name);
      return a;
    case Kind::kSparse:
      a.set_type(A::SPARSE_TENSOR);
      *a.mutable_sparse_tensor() = ParseProto<onnx::SparseTensorProto>(v, name);
      return a;
    case Kind::kType:
      a.set_type(A::TYPE_PROTO);
      *a.mutable_tp() = ParseProto<onnx::TypeProto>(v, name);
      return a;
    case Kind::kOther: break;
  }
  if (!py::isinstance<py::sequence>(v)) {
    throw py::type_error("attribute '" + name + "': " + std::string(py::str(py::type::of(v).attr("__name__"))) +
                         " is no attribute type (int, float, str, numpy array, onnx proto, or a list of one of them)");
  }
  // A list: its elements decide the kind; ints mixed with floats are floats.
  auto seq = v.cast<py::sequence>();
  Kind kind = Kind::kInt;
  bool first = true;
  for (auto item : seq) {
    Kind k = KindOf(item);
    if (first) {
      kind = k;
      first = false;
    } else if (k != kind) {
      bool numbers = (k == Kind::kInt || k == Kind::kFloat) && (kind == Kind::kInt || kind == Kind::kFloat);
      if (!numbers) throw py::type_error("attribute '" + name + "': a list mixing element kinds");
      kind = Kind::kFloat;
    }
  }
  switch (kind) {
    case Kind::kInt:  // also the empty list: INTS, as onnx.helper.make_attribute does with a hint-less []
      a.set_type(A::INTS);
      for (auto item : seq) a.add_ints(item.cast<int64_t>());
      return a;
    case Kind::kFloat:
      a.set_type(A::FLOATS);
      for (auto item : seq) a.add_floats(item.cast<float>());
      return a;
    case Kind::kString:
      a.set_type(A::STRINGS);
      for (auto item : seq) a.add_strings(ToBytes(item));
      return a;
    case Kind::kTensor:
      a.set_type(A::TENSORS);
      for (auto item : seq) *a.add_tensors() = ToTensor(item, name);
      return a;
    case Kind::kSparse:
      a.set_type(A::SPARSE_TENSORS);
      for (auto item : seq) *a.add_sparse_tensors() = ParseProto<onnx::SparseTensorProto>(item, name);
      return a;
    case Kind::kType:
      a.set_type(A::TYPE_PROTOS);
      for (auto item : seq) *a.add_type_protos() = ParseProto<onnx::TypeProto>(item, name);
      return a;
    case Kind::kOther: break;
  }
  throw py::type_error("attribute '" + name + "': list elements must be int, float, str, arrays or onnx protos");
}

std::vector<A> ToAttributes(const py::dict& attrs) {
  std::vector<A> out;
  for (auto [k, v] : attrs) out.push_back(ToAttribute(k.cast<std::string>(), v));
  return out;
}

namespace {

py::object Str(const std::string& s) {
  PyObject* u = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
  if (u) return py::reinterpret_steal<py::object>(u);
  PyErr_Clear();
  return py::bytes(s);
}

template <typename Proto>
py::object OnnxProto(const char* cls, const Proto& p) {
  py::object out = py::module_::import("onnx").attr(cls)();
  out.attr("ParseFromString")(py::bytes(p.SerializeAsString()));
  return out;
}

py::object TensorValue(const T& t) {
  const char* dtype = NumpyTypeOf(t.data_type());
  bool external = t.data_location() == T::EXTERNAL;
  if (dtype && !external) {
    auto raw = Tensor::FromProto(t).RawBytesCopy();
    if (raw.ok()) {
      std::vector<py::ssize_t> shape(t.dims().begin(), t.dims().end());
      py::array array(py::dtype(dtype), shape);
      if (static_cast<size_t>(array.nbytes()) == raw->size()) {
        std::memcpy(array.mutable_data(), raw->data(), raw->size());
        return std::move(array);
      }
    }
  }
  return OnnxProto("TensorProto", t);
}

}  // namespace

py::object FromAttribute(const A& p) {
  switch (p.type()) {
    case A::INT: return py::int_(p.i());
    case A::FLOAT: return py::float_(p.f());
    case A::STRING: return Str(p.s());
    case A::INTS: return py::cast(std::vector<int64_t>(p.ints().begin(), p.ints().end()));
    case A::FLOATS: return py::cast(std::vector<float>(p.floats().begin(), p.floats().end()));
    case A::STRINGS: {
      py::list l;
      for (const auto& s : p.strings()) l.append(Str(s));
      return l;
    }
    case A::TENSOR: return TensorValue(p.t());
    case A::TENSORS: {
      py::list l;
      for (const auto& t : p.tensors()) l.append(TensorValue(t));
      return l;
    }
    case A::SPARSE_TENSOR: return OnnxProto("SparseTensorProto", p.sparse_tensor());
    case A::SPARSE_TENSORS: {
      py::list l;
      for (const auto& t : p.sparse_tensors()) l.append(OnnxProto("SparseTensorProto", t));
      return l;
    }
    case A::TYPE_PROTO: return OnnxProto("TypeProto", p.tp());
    case A::TYPE_PROTOS: {
      py::list l;
      for (const auto& t : p.type_protos()) l.append(OnnxProto("TypeProto", t));
      return l;
    }
    default: return OnnxProto("AttributeProto", p);
  }
}

}  // namespace onnxsurgeon::python
