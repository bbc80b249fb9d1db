// Python values <-> onnx::AttributeProto, one mapping for both directions so what
// Node.attribute() returns, Rewriter.op(attrs=...) takes back:
//
//   int / bool -> INT            float -> FLOAT            str / bytes -> STRING
//   list of int -> INTS          list of float -> FLOATS   list of str -> STRINGS
//   numpy array -> TENSOR        onnx.TensorProto -> TENSOR (and the other onnx protos:
//   SparseTensorProto, TypeProto, and lists of any of these -> the list kinds)
//   onnx.AttributeProto -> itself (renamed)
//
// Graph attributes are refused: a subgraph has to be imported into the IR, which a bare
// proto handed to a rewrite does not do.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace onnxsurgeon::python {

onnx::AttributeProto ToAttribute(const std::string& name, const pybind11::handle& value);
std::vector<onnx::AttributeProto> ToAttributes(const pybind11::dict& attrs);

// STRING as str (bytes when not UTF-8), TENSOR as a numpy array (onnx.TensorProto for
// types numpy lacks), SPARSE_TENSOR / TYPE_PROTO / GRAPH as onnx protos.
pybind11::object FromAttribute(const onnx::AttributeProto& attribute);

}  // namespace onnxsurgeon::python
