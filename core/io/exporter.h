// Exporter: IR -> onnx::ModelProto. The inverse of the importer: shells are copied back
// and filled with names, so a model that no pass touched exports equal to what was loaded.
#pragma once

#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "core/ir/model.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

// Decides how an initializer's tensor is written. The default copies its bytes inline.
// The saver uses it to stream large payloads instead of copying them into the proto.
using TensorWriter = std::function<void(const Value& value, const Tensor& tensor, onnx::TensorProto* out)>;

// Names written in place of some values' own (see ScopeUniqueNames).
using ValueNames = absl::flat_hash_map<const Value*, std::string>;
// dim_params written in place of others.
using SymbolNames = absl::flat_hash_map<std::string, std::string>;

struct ExportOptions {
  // Applied to the main graph's initializers only; others are always copied inline.
  TensorWriter main_initializer_writer;
  // Values named here are written under that name, everywhere they are defined or read.
  // Null: ShadowFreeNames.
  const ValueNames* renamed = nullptr;
  // Main-graph inputs are written with their dims as analyses read them (InputSymbol in
  // core/ir/shape.h: a dim_param an earlier input declares becomes its own), and so are
  // the types inferred from them, for onnx shape inference. Otherwise (saved models) the
  // inputs keep their declarations and inferred types say `dim_param` for each
  // `dim_param@input` (AnalysedInputSymbols).
  bool input_symbols_as_analysed = false;
};

// Given a model. Execute builds the ModelProto (bytes copied unless a writer says
// otherwise). Result a proto equal to the loaded one if nothing changed.
onnx::ModelProto ExportModel(const Model& model, const ExportOptions& options = {});

// Names under which no value of the main graph and its subgraphs shares a name with a
// value of another graph of the model: each value keeps its own unless a graph visited
// earlier (the main graph, then subgraphs depth-first in node order) defines the same
// name; it then takes `<name>__<k>`, a name no graph of the model uses. Empty when every
// name is defined once. For tools that key values by name across graphs (onnx's shape
// inference shares data propagation between sibling If branches by name), where ONNX
// scopes names per graph.
ValueNames ScopeUniqueNames(const Model& model);

// Names that keep onnx's lexical scoping rule: no value a subgraph defines takes a name
// visible where the subgraph's node stands (defined by an enclosing graph before it, or
// as its input or initializer), nor, as onnxruntime requires of a body that reads an
// enclosing node's value, a name an enclosing graph defines after it (the outputs of the
// node holding the subgraph excepted). A valid model needs none of the first kind; a
// rewrite that moves a definition earlier (a fold into an initializer) or makes a body
// read a new outer node can make one necessary. Each such subgraph value takes a fresh
// name (as ScopeUniqueNames). Every export applies it.
ValueNames ShadowFreeNames(const Model& model);

// The analysed symbols of the main graph's inputs that differ from what they declare
// (InputSymbol), mapped to the declared dim_param.
SymbolNames AnalysedInputSymbols(const Graph& main);

// A model-local function.
onnx::FunctionProto ExportFunction(const Function& function);

// The graph alone (for printing a subgraph, tests), values named as `renamed` says.
onnx::GraphProto ExportGraph(const Graph& graph, const ValueNames* renamed = nullptr);

}  // namespace onnxsurgeon
