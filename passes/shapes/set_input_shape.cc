// set-input-shape: fixes dynamic dims of the main graph's inputs, then re-runs onnx shape
// inference so outputs and value_info agree (as onnx-simplifier's --overwrite-input-shape).
//
// Two forms, combinable:
//   shapes=NAME:DIMS;NAME:DIMS   DIMS is dims joined by 'x' or ',' (1x3x224x224, 1,3,224,224); a dim is a
//                                number, or '?' to leave that dim as it is. An input
//                                without a shape gets one. Split at the last ':', so names
//                                with ':' work (input:0:1x3).
//   dims=SYMBOL:N;SYMBOL:N       sets the symbolic dim SYMBOL to N everywhere it appears
//                                (inputs, outputs, value_info, every graph): batch:1
// Errors, with nothing changed: an unknown input name, a rank other than the input's, a
// number contradicting a static dim (or an initializer's dims), a symbol no graph input
// uses, a syntax error. A dim_value of -1 (how paddle2onnx writes a dynamic dim) is
// dynamic, not a static dim a number could contradict. Shape inference then types every output and value_info entry
// afresh (value_info gains entries for the values it types; values of nodes it cannot
// infer, e.g. custom ops, keep their old entries, with `dims` symbols substituted).
//
// Options:
//   shapes=                  NAME:DIMS items, ';'-separated (the primary option)
//   dims=                    SYMBOL:N items, ';'-separated
//
// Before (set-input-shape=input_ids:1x128):
//   g (int64[batch,seq] input_ids) => (float[batch,seq,768] h) { ... }
// After:
//   g (int64[1,128] input_ids) => (float[1,128,768] h) { ... }
#include <algorithm>
#include <exception>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/analysis/type_facts.h"
#include "core/interop/onnx_interop.h"
#include "core/io/exporter.h"
#include "core/ir/shape.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

constexpr int64_t kKeepDim = InputShape::kKeepDim;  // '?' in DIMS

StatusOr<std::vector<std::pair<std::string, int64_t>>> ParseSymbols(const std::string& value) {
  std::vector<std::pair<std::string, int64_t>> symbols;
  for (const std::string& item : SplitListOption(value)) {
    size_t colon = item.rfind(':');
    int64_t n;
    if (colon == std::string::npos || colon == 0 || !absl::SimpleAtoi(item.substr(colon + 1), &n) || n < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dims item '", item, "' is not SYMBOL:N with N >= 0 (e.g. batch:1)"));
    }
    symbols.emplace_back(item.substr(0, colon), n);
  }
  return symbols;
}

std::string ShapeText(const onnx::TypeProto& type) {
  if (!type.tensor_type().has_shape()) return "unknown shape";
  std::vector<std::string> dims;
  for (const auto& d : type.tensor_type().shape().dim())
    dims.push_back(d.has_dim_value() ? absl::StrCat(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// Given a graph input and the requested dims. Execute checks them against what the model
// says. Result the input's new type.
StatusOr<onnx::TypeProto> NewInputType(const Value& input, const std::vector<int64_t>& dims) {
  if (!input.type() || !input.type()->has_tensor_type()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph input '", input.name(), "' is not a tensor with a known type"));
  }
  onnx::TypeProto type = *input.type();
  auto* shape = type.mutable_tensor_type()->mutable_shape();
  bool had_shape = input.type()->tensor_type().has_shape();
  if (had_shape && shape->dim_size() != static_cast<int>(dims.size())) {
    return absl::InvalidArgumentError(absl::StrCat("graph input '", input.name(), "' has rank ", shape->dim_size(), " ",
                                                   ShapeText(*input.type()), ", ", dims.size(), " dims given"));
  }
  if (!had_shape)
    for (size_t i = 0; i < dims.size(); ++i) shape->add_dim();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->mutable_dim(static_cast<int>(i));
    if (dims[i] == kKeepDim) continue;
    // Paddle (paddle2onnx) writes a dynamic dim as dim_value -1: not a static dim to contradict.
    if (d->has_dim_value() && d->dim_value() >= 0 && d->dim_value() != dims[i]) {
      return absl::InvalidArgumentError(absl::StrCat("dim ", i, " of graph input '", input.name(), "' ",
                                                     ShapeText(*input.type()), " is static ", d->dim_value(), "; ",
                                                     dims[i], " contradicts it"));
    }
    d->set_dim_value(dims[i]);  // clears dim_param (a oneof)
  }
  if (const Tensor* t = input.initializer()) {
    const auto& tdims = t->meta().dims();
    bool same = tdims.size() == shape->dim_size();
    for (int i = 0; same && i < tdims.size(); ++i)
      same = !shape->dim(i).has_dim_value() || shape->dim(i).dim_value() == tdims[i];
    if (!same) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input '", input.name(), "' is an initializer whose dims contradict ", ShapeText(type)));
    }
  }
  return type;
}

// Replaces dim_param `symbol` by `n` in a type (tensors, and inside sequence/optional/map).
int SubstituteSymbol(onnx::TypeProto& type, const std::string& symbol, int64_t n) {
  int replaced = 0;
  if (type.has_tensor_type() && type.tensor_type().has_shape()) {
    for (auto& d : *type.mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (d.has_dim_param() && SymbolDeclaredAs(d.dim_param(), symbol)) {
        d.set_dim_value(n);
        ++replaced;
      }
    }
  }
  if (type.has_sequence_type())
    replaced += SubstituteSymbol(*type.mutable_sequence_type()->mutable_elem_type(), symbol, n);
  if (type.has_optional_type())
    replaced += SubstituteSymbol(*type.mutable_optional_type()->mutable_elem_type(), symbol, n);
  if (type.has_map_type()) replaced += SubstituteSymbol(*type.mutable_map_type()->mutable_value_type(), symbol, n);
  return replaced;
}

class SetInputShapePass : public Pass {
 public:
  SetInputShapePass(std::vector<InputShape> shapes, std::vector<std::pair<std::string, int64_t>> symbols)
      : shapes_(std::move(shapes)), symbols_(std::move(symbols)) {}

  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    if (shapes_.empty() && symbols_.empty()) return result;
    Graph& g = model.graph();
    // Check everything before changing anything.
    std::vector<std::pair<Value*, onnx::TypeProto>> new_types;
    for (const InputShape& s : shapes_) {
      auto it = std::find_if(g.inputs().begin(), g.inputs().end(), [&](Value* v) { return v->name() == s.name; });
      if (it == g.inputs().end()) {
        std::vector<std::string> names;
        for (Value* v : g.inputs()) names.push_back(v->name());
        return absl::InvalidArgumentError(
            absl::StrCat("no graph input named '", s.name, "' (graph inputs: ", absl::StrJoin(names, ", "), ")"));
      }
      OS_ASSIGN_OR_RETURN(onnx::TypeProto type, NewInputType(**it, s.dims));
      new_types.emplace_back(*it, std::move(type));
    }
    for (const auto& [symbol, n] : symbols_) {
      bool used = false;
      for (Value* v : g.inputs()) {
        onnx::TypeProto probe = v->type() ? *v->type() : onnx::TypeProto();
        used |= SubstituteSymbol(probe, symbol, n) > 0;
      }
      if (!used) {
        return absl::InvalidArgumentError(absl::StrCat("no graph input has a dim named '", symbol, "'"));
      }
    }
    // Apply.
    for (auto& [input, type] : new_types) {
      *input->mutable_info()->mutable_type() = std::move(type);
      result.Count("inputs-reshaped");
    }
    for (const auto& [symbol, n] : symbols_) {
      for (Graph* graph : model.AllGraphs()) {
        auto substitute = [&](Value* v) {
          if (v && v->type())
            result.Count("symbolic-dims-set", SubstituteSymbol(*v->mutable_info()->mutable_type(), symbol, n));
        };
        for (Value* v : graph->inputs()) substitute(v);
        for (Value* v : graph->outputs()) substitute(v);
        for (const auto& entry : graph->value_info()) substitute(entry.value);
      }
    }
    // Paddle's -1 dims elsewhere (outputs, value_info) are dynamic too: cleared, so inference
    // can write the dims the new input shapes give them.
    for (Graph* graph : model.AllGraphs()) {
      auto clear_negative = [&](Value* v) {
        if (!v || !v->type() || !v->type()->has_tensor_type() || !v->type()->tensor_type().has_shape()) return;
        for (auto& d : *v->mutable_info()->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
          if (d.has_dim_value() && d.dim_value() < 0) d.clear_dim_value();
      };
      for (Value* v : graph->outputs()) clear_negative(v);
      for (const auto& entry : graph->value_info()) clear_negative(entry.value);
    }
    OS_RETURN_IF_ERROR(Reinfer(model));
    return result;
  }

 private:
  // Shape inference from scratch over the new input shapes (old value_info ignored).
  static Status Reinfer(Model& model) {
    TypeRequest request{.sources = TypeSources::kReinfer};
    request.infer.drop_value_info = true;
    request.infer.replace_types = true;
    auto adopted = TypeFacts::Ensure(model, TypeFacts::AnyMissing, request);
    if (!adopted.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape inference with the new shapes failed: ", adopted.status().message()));
    }
    return absl::OkStatus();
  }

  std::vector<InputShape> shapes_;
  std::vector<std::pair<std::string, int64_t>> symbols_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateSetInputShapePass(const PassOptions& o) {
  OS_ASSIGN_OR_RETURN(auto symbols, ParseSymbols(o.String("dims")));
  return std::make_unique<SetInputShapePass>(o.Shapes("shapes"), std::move(symbols));
}

}  // namespace onnxsurgeon::passes
