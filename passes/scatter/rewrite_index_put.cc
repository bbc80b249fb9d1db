// rewrite-index-put: replaces the index_put nodes torch leaves behind (ATen fallback, or
// a custom-domain op) by ScatterND, so a standard runtime can load the model.
//
// Matches
//   org.pytorch.aten::ATen<operator="index_put" | "index_put_">(self, i_0, ..., i_n-1, values [, accumulate])
//   <any non-standard domain>::index_put | index_put_ (same inputs)
// accumulate is an `accumulate` int attribute or a trailing constant bool input
// (default false). It computes self with self[i_0, ..., i_n-1] = values (or += values):
//   b_k     = i_k broadcast to the common shape B of all i_k, negative entries + dim k
//   idx     = Concat(Unsqueeze(b_0, -1), ..., Unsqueeze(b_n-1, -1), axis=-1)    [B..., n]
//   updates = Expand(values, B ++ shape(self)[n:])
//   y       = ScatterND(self, idx, updates)                    accumulate=false
//           = ScatterND<reduction="add">(self, idx, updates)  accumulate=true, opset >= 16
// accumulate=true below opset 16 (13-15) uses the exact duplicate-combining lowering of
// lower-scatternd-reduction (repeated indices sum, as in torch). A single bool/uint8 mask
// index (x[mask] = v) becomes idx = Transpose(NonZero(mask)). int32 indices are Cast to
// int64. The org.pytorch.aten (or custom) opset import goes once nothing uses it.
// Refused with an error naming the node (the model would stay unloadable otherwise): a
// None (omitted) index position, bool masks mixed with other indices, index element types
// that cannot be found, a non-constant accumulate, accumulate=true below opset 13, a
// default-domain opset below 11 (no ScatterND).
//
// Options: none.
//
// Before:  y = org.pytorch.aten.ATen<operator="index_put">(x, rows, v, acc)    (acc = false)
// After:   r = Unsqueeze(Where(rows < 0, rows + dim0, rows), -1)
//          y = ScatterND(x, Concat(r), Expand(v, shape(rows) ++ shape(x)[1:]))
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/constant.h"
#include "core/ir/dtypes.h"
#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/pass/pass.h"
#include "core/rewrite/rewriter.h"
#include "passes/lowering/element_type.h"
#include "passes/lowering/scatternd.h"
#include "passes/registry.h"
#include "passes/scatter/rewrite_index_put.h"

namespace onnxsurgeon::passes {
namespace {

constexpr const char* kAtenDomain = "org.pytorch.aten";

// What the node's inputs mean.
struct IndexPut {
  Value* self = nullptr;
  std::vector<Value*> indices;
  Value* values = nullptr;
  bool accumulate = false;
  Value* accumulate_input = nullptr;  // the constant bool input, if accumulate came as one
};

std::string Describe(const Node& n) {
  return absl::StrCat("index_put node '", n.name(), "' (", n.domain(), "::", n.op_type(), ")");
}

StatusOr<IndexPut> Parse(const Node& n) {
  auto fail = [&](std::string why) {
    return absl::InvalidArgumentError(absl::StrCat("rewrite-index-put: ", Describe(n), ": ", why));
  };
  std::vector<Value*> in = n.inputs();
  IndexPut p;
  if (const Attribute* a = n.FindAttribute("accumulate")) p.accumulate = a->i() != 0;
  if (in.size() >= 4 && in.back() && ElementType(in.back()) == onnx::TensorProto::BOOL) {
    auto c = GetConstant(in.back());
    if (!c) return fail("accumulate is computed at run time; it must be a constant");
    auto v = c->AsInt64s();
    if (!v || v->size() != 1) return fail("accumulate must be one bool");
    p.accumulate = (*v)[0] != 0;
    p.accumulate_input = in.back();
    in.pop_back();
  }
  if (in.size() < 3) return fail(absl::StrCat("has ", in.size(), " inputs; wants self, at least one index, values"));
  p.self = in.front();
  p.values = in.back();
  p.indices.assign(in.begin() + 1, in.end() - 1);
  if (!p.self || !p.values) return fail("self or values is omitted");
  for (size_t k = 0; k < p.indices.size(); ++k)
    if (!p.indices[k])
      return fail(absl::StrCat("index ", k, " is None (a full slice); only tensor indices are supported"));
  return p;
}

// Rewrites one index_put node (every check comes before the first change).
class IndexPutRewrite {
 public:
  StatusOr<bool> Rewrite(Node* node, Rewriter& rw) {
    OS_ASSIGN_OR_RETURN(IndexPut p, Parse(*node));
    int64_t opset = node->graph()->OpsetVersion("");
    if (opset < 11) return Error(*node, absl::StrCat("ScatterND needs opset >= 11; the model imports ", opset));
    if (p.accumulate && opset < 13)
      return Error(
          *node,
          absl::StrCat("accumulate=true needs opset >= 13 (16 for ScatterND reduction); the model imports ", opset));
    int32_t self_type = ElementType(p.self);
    if (p.accumulate && opset < 15 && self_type == 0)
      return Error(*node, "accumulate=true below opset 15 needs self's element type, which is unknown");
    std::vector<int32_t> types;
    for (Value* i : p.indices) {
      int32_t t = ElementType(i);
      if (t == 0) return Error(*node, absl::StrCat("the element type of index '", i->name(), "' is unknown"));
      if (t != onnx::TensorProto::INT64 && t != onnx::TensorProto::INT32 && t != onnx::TensorProto::BOOL &&
          t != onnx::TensorProto::UINT8)
        return Error(*node, absl::StrCat("index '", i->name(), "' has element type ", DataTypeName(t)));
      types.push_back(t);
    }
    bool mask = types[0] == onnx::TensorProto::BOOL || types[0] == onnx::TensorProto::UINT8;
    if (mask && p.indices.size() > 1)
      return Error(*node, "a bool mask index mixed with other indices is not supported");
    for (size_t k = 1; k < types.size(); ++k)
      if (types[k] == onnx::TensorProto::BOOL || types[k] == onnx::TensorProto::UINT8)
        return Error(*node, "a bool mask index mixed with other indices is not supported");
    int64_t mask_rank = -1;
    if (mask) {
      const Value* m = p.indices[0];
      if (!m->has_type() || !m->type()->tensor_type().has_shape())
        return Error(*node, "the rank of the bool mask index is unknown");
      mask_rank = m->type()->tensor_type().shape().dim_size();
    }

    // Committed: from here on the graph changes.
    ints_.clear();
    opset_ = opset;
    Value* self_shape = rw.Op("Shape", {p.self});
    Value* idx;
    Value* batch_shape;  // B
    int64_t n;
    if (mask) {
      n = mask_rank;
      idx = rw.Op("Transpose", {rw.Op("NonZero", {p.indices[0]})}, {Rewriter::AttrInts("perm", {1, 0})});  // [nnz, r]
      batch_shape = rw.Op("Slice", {rw.Op("Shape", {idx}), Ints(rw, {0}), Ints(rw, {1})});
    } else {
      n = static_cast<int64_t>(p.indices.size());
      std::vector<Value*> b;
      for (size_t k = 0; k < p.indices.size(); ++k) {
        Value* i = p.indices[k];
        b.push_back(types[k] == onnx::TensorProto::INT32
                        ? rw.Op("Cast", {i}, {Rewriter::AttrInt("to", onnx::TensorProto::INT64)})
                        : i);
      }
      // B: the broadcast of every index shape (Expand broadcasts both ways).
      Value* common = b[0];
      for (size_t k = 1; k < b.size(); ++k) common = rw.Op("Expand", {b[k], rw.Op("Shape", {common})});
      batch_shape = rw.Op("Shape", {common});
      std::vector<Value*> columns;
      for (size_t k = 0; k < b.size(); ++k) {
        Value* bk = b.size() == 1 ? b[k] : rw.Op("Expand", {b[k], batch_shape});
        // torch accepts negative indices: -1 is the last row.
        Value* dim =
            rw.Op("Slice", {self_shape, Ints(rw, {static_cast<int64_t>(k)}), Ints(rw, {static_cast<int64_t>(k) + 1})});
        bk = rw.Op("Where", {rw.Op("Less", {bk, Ints(rw, {0})}), rw.Op("Add", {bk, dim}), bk});
        columns.push_back(Unsqueeze(rw, bk, -1));
      }
      idx = columns.size() == 1 ? columns[0] : rw.Op("Concat", columns, {Rewriter::AttrInt("axis", -1)});
    }
    Value* rest = rw.Op("Slice", {self_shape, Ints(rw, {n}), Ints(rw, {INT64_MAX})});
    Value* updates = rw.Op("Expand", {p.values, rw.Op("Concat", {batch_shape, rest}, {Rewriter::AttrInt("axis", 0)})});
    Value* out;
    if (!p.accumulate) {
      out = rw.Op("ScatterND", {p.self, idx, updates});
    } else if (opset >= 16) {
      out = rw.Op("ScatterND", {p.self, idx, updates}, {Rewriter::AttrString("reduction", "add")});
    } else {
      // rewrite-index-put has no max-pair-elements option: its pair tensor is not bounded (0).
      OS_ASSIGN_OR_RETURN(
          out, lowering::ScatterWithoutReduction(rw, *node, p.self, idx, updates, lowering::Reduction::kAdd, opset,
                                                 self_type, 0, "rewrite-index-put"));
    }
    std::vector<Value*> replacements(node->num_outputs(), nullptr);
    replacements[0] = out;
    Value* accumulate_input = p.accumulate_input;
    OS_RETURN_IF_ERROR(rw.ReplaceNode(node, replacements));
    // The accumulate flag was only for the ATen op.
    if (accumulate_input && !accumulate_input->HasUsers() && !accumulate_input->IsGraphInput()) {
      if (accumulate_input->IsInitializer()) {
        OS_RETURN_IF_ERROR(rw.RemoveInitializer(accumulate_input));
      } else if (Node* c = accumulate_input->producer(); c && c->Is("Constant")) {
        OS_RETURN_IF_ERROR(rw.EraseNode(c));
      }
    }
    return true;
  }

 private:
  StatusOr<bool> Error(const Node& n, std::string why) {
    return absl::InvalidArgumentError(absl::StrCat("rewrite-index-put: ", Describe(n), ": ", why));
  }
  Value* Ints(Rewriter& rw, std::vector<int64_t> v) {
    Value*& c = ints_[v];
    if (!c) c = rw.Int64s(v);
    return c;
  }
  // Unsqueeze's axes are an input from opset 13, an attribute before.
  Value* Unsqueeze(Rewriter& rw, Value* v, int64_t axis) {
    if (opset_ >= 13) return rw.Op("Unsqueeze", {v, Ints(rw, {axis})});
    return rw.Op("Unsqueeze", {v}, {Rewriter::AttrInts("axes", {axis})});
  }

  std::map<std::vector<int64_t>, Value*> ints_;  // per rewrite: one initializer per value
  int64_t opset_ = 0;
};

// Not a pattern pass: index_put has a variable number of inputs and lives in any custom
// domain, so it is found by a walk; every change still goes through a Rewriter.
class RewriteIndexPutPass : public Pass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    std::vector<Node*> nodes;
    for (Graph* g : model.AllGraphs())
      for (Node* n : g->nodes())
        if (IsIndexPut(*n)) nodes.push_back(n);
    if (nodes.empty()) return result;
    // Index element types decide between indices and masks: find them if they are missing.
    for (Node* n : nodes) {
      bool unknown = false;
      for (size_t i = 1; i < n->num_inputs(); ++i) unknown |= n->input(i) && ElementType(n->input(i)) == 0;
      if (unknown) {
        TypeRequest request{.sources = TypeSources::kOnnx};  // as InferShapes(model, false)
        request.infer.data_propagation = false;
        request.infer.max_payload_bytes = -1;
        (void)TypeFacts::Ensure(model, TypeFacts::AnyMissing, request);
        break;
      }
    }
    Rewriter rw;
    rw.SetRule("rewrite-index-put");
    std::set<std::string> domains;
    for (Node* n : nodes) {
      domains.insert(n->domain());
      rw.SetInsertionPoint(n);
      IndexPutRewrite rewrite;
      OS_RETURN_IF_ERROR(rewrite.Rewrite(n, rw).status());
      result.Count("index_put");
    }
    DropUnusedImports(model, domains);
    return result;
  }

 private:
  // The org.pytorch.aten (or custom) import existed for the nodes just replaced; once no
  // node or function uses the domain, the model no longer depends on it.
  static void DropUnusedImports(Model& model, std::set<std::string> domains) {
    for (const std::string& used : UsedDomains(model)) domains.erase(used);
    auto* imports = model.mutable_proto().mutable_opset_import();
    for (int i = imports->size() - 1; i >= 0; --i)
      if (domains.count(imports->Get(i).domain())) imports->DeleteSubrange(i, 1);
  }
};

}  // namespace

bool IsIndexPut(const Node& n) {
  if (n.op_type() == "ATen" && n.domain() == kAtenDomain) {
    const Attribute* op = n.FindAttribute("operator");
    return op && (op->s() == "index_put" || op->s() == "index_put_");
  }
  return (n.op_type() == "index_put" || n.op_type() == "index_put_") && !IsStandardDomain(n.domain());
}

StatusOr<std::unique_ptr<Pass>> CreateRewriteIndexPutPass(const PassOptions&) {
  return std::make_unique<RewriteIndexPutPass>();
}

}  // namespace onnxsurgeon::passes
