// Local shape propagation: element types and shapes of node outputs from a few exact
// rules, so passes that only need the shapes of a small static model do not pay for
// onnx shape inference (its first call builds onnx's schema registry, ~11 ms).
//
// The rules cover standard-domain ops whose shape follows from their inputs' shapes and
// constant operands alone: elementwise ops (unary, numpy broadcasting), MatMul, Gemm,
// Reshape/Expand/Unsqueeze/Squeeze with constant operands, Transpose, Concat, Flatten,
// reductions with constant axes, Gather, Shape, Cast, LayerNormalization, Constant,
// Conv/pooling/normalization, Slice, ConstantOfShape and shapes computed from Shape
// (rules_data.cc), and If from its branches. One rule per op, in the op table
// (core/shape/op_table.h, one file per family in core/shape/ops/).
// Where onnx shape inference also gives a type, the rules give the same element type
// and the same static dims; a symbolic dim is only given when it is provably that size.
// Anything else (other ops, undecidable broadcasts, unknown inputs) stays untyped, and
// so do its users: the rules never guess.
#pragma once

#include "absl/container/flat_hash_map.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/model.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

namespace shape_rules {
struct TensorType;
}
// A local rule's result as a TypeProto: element type and dims (static, symbolic or unknown).
onnx::TypeProto TypeProtoOf(const shape_rules::TensorType& t);

// Given a graph. Execute nothing (the graph is read only). Result the types the rules
// derive for node outputs of `graph` and its subgraphs that have none, walking nodes once
// in order (a node before its producers learns nothing), a node's subgraphs before it.
absl::flat_hash_map<const Value*, onnx::TypeProto> PropagatedTypes(const Graph& graph);

// Given a model. Execute sets PropagatedTypes(main graph) on its values (subgraphs' too) the way
// InferShapes sets inferred types (AdoptType: in memory only unless
// options.record_value_info). Result the number of values that gained a type.
int PropagateShapes(Model& model, const InferShapesOptions& options);

// Given a model and inference options. Execute onnx shape inference (InferShapes), then the
// local rules for the values it left untyped, and again, only filling in, while a round adds
// a type: onnx reads the rules' types on its next call, and the rules read onnx's. A shape
// computed from static dims (Reshape(x, Concat(Shape(f)[0], Shape(f)[1] * Shape(f)[2]))),
// which onnx's data propagation does not follow through Mul, is typed by the rules, and
// what comes after it by either. With options.drop_value_info / replace_types, only the
// first onnx call drops and replaces. Result the number of values that gained a type; an
// error only from onnx inference.
StatusOr<int> ReinferShapes(Model& model, const InferShapesOptions& options);

// Filling in the types a pass reads (TypeFacts::Ensure) and keeping the types set on the
// model's values current after rewrites (forgetting what a rewrite may have made decidable,
// re-inferring from the graph inputs) is the type service's: TypeFacts::Ensure, Refresh,
// ForgetInferred, ForgetBelowRewrites (core/analysis/type_facts.h). Passes ask it; they do
// not call PropagateShapes or ReinferShapes themselves.

// True when some node output of the main graph (or its subgraphs) has no type: what
// InferShapes could still add. When false, InferShapes would change nothing in memory.
bool HasUntypedOutputs(const Model& model);

}  // namespace onnxsurgeon
