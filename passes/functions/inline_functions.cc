// inline-functions: replaces every call of a model-local function by the function's body.
//
// Attribute references inside the body (`ref_attr_name`) take the caller's attribute, or
// the function's default, or are dropped when neither exists. The body's opset imports
// must agree with the model's: a domain the model lacks is imported; where the versions
// differ, every op the body uses must have the same schema at both versions, else the
// pass stops with an error naming the op. Ops of other (custom) domains are not calls and
// stay as they are. Functions nothing calls any more are removed (keep-functions=true
// keeps them), and so are the opset imports of domains nothing uses any more.
//
// Options:
//   keep-functions=false  keep the FunctionProtos even when nothing calls them any more
//   when=always           always: every call. simplifies: only a call whose body can
//                         come out no larger than the call itself: a body of at most one
//                         node besides Constants (which simplify makes initializers), or
//                         a call whose inputs are all constants (fold-constants folds the
//                         body). simplify runs it so: a LayerNorm function below opset 17
//                         (which nothing fuses) stays one call instead of 10 nodes.
//                         Passes that need a body inline it themselves (fix-layernorm
//                         inlines calls of functions holding a LayerNorm and fuses them).
//
// Before:  Y = local.Twice(X)          Twice(x) => (y) { y = Add(x, x) }
// After:   Y = Add(X, X)
#include "passes/functions/inline_functions.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/ir/clone.h"
#include "core/ir/constant.h"
#include "core/ir/ir_version.h"
#include "core/rewrite/rewriter.h"
#include "onnx/defs/schema.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

constexpr int kMaxDepth = 64;  // calls nested deeper than this mean recursion

Status CheckOpsets(Model& model, const Function& f) {
  for (const auto& imp : f.proto().opset_import()) {
    int64_t model_version = model.OpsetVersion(imp.domain());
    if (model_version < 0) {
      model.SetOpsetVersion(imp.domain(), imp.version());
      continue;
    }
    if (model_version == imp.version()) continue;
    std::string domain(CanonicalDomain(imp.domain()));
    for (Node* n : f.body().AllNodesRecursive()) {
      if (CanonicalDomain(n->domain()) != domain) continue;
      const auto* a = onnx::OpSchemaRegistry::Schema(n->op_type(), static_cast<int>(imp.version()), domain);
      const auto* b = onnx::OpSchemaRegistry::Schema(n->op_type(), static_cast<int>(model_version), domain);
      if (!a || !b || a->since_version() != b->since_version()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot inline function '", f.domain(), "::", f.name(), "': its ", n->op_type(), " node is at opset ",
            imp.version(), " of '", domain.empty() ? "ai.onnx" : domain, "' but the model imports ", model_version,
            ", and the op differs between them (convert the opset first)"));
      }
    }
  }
  return absl::OkStatus();
}

// Resolves `ref_attr_name` attributes against the call site.
AttributeFilter ResolveAttributes(const Node& call, const Function& f) {
  return [&call, &f](const Attribute& source, onnx::AttributeProto& clone) {
    if (!source.is_ref()) return true;
    const std::string& ref = source.proto().ref_attr_name();
    if (const Attribute* given = call.FindAttribute(ref)) {
      clone = given->proto();
      clone.set_name(source.name());
      return true;
    }
    for (const auto& def : f.proto().attribute_proto()) {
      if (def.name() == ref) {
        clone = def;
        clone.set_name(source.name());
        return true;
      }
    }
    return false;  // optional attribute not given: the op's own default applies
  };
}

}  // namespace

Status InlineCall(Model& model, Node* call, const Function& f, PassResult& result) {
  OS_RETURN_IF_ERROR(CheckOpsets(model, f));
  const Graph& body = f.body();
  if (call->num_inputs() > body.inputs().size() || call->num_outputs() > body.outputs().size()) {
    return absl::InvalidArgumentError(absl::StrCat("call '", call->name(), "' of function '", f.name(),
                                                   "' passes more inputs or outputs than the function declares"));
  }
  ValueMap map;
  for (size_t i = 0; i < body.inputs().size(); ++i) map[body.inputs()[i]] = call->input(i);
  std::string prefix = (call->name().empty() ? f.name() : call->name()) + "/";
  AttributeFilter filter = ResolveAttributes(*call, f);
  Rewriter rw;
  rw.SetRule("inline-functions");
  rw.SetInsertionPoint(call);
  for (Node* n : body.nodes()) OS_RETURN_IF_ERROR(rw.Clone(*n, map, prefix, filter).status());
  for (size_t j = 0; j < call->num_outputs(); ++j) {
    Value* out = call->output(j);
    if (!out) continue;
    Value* inner = map[body.outputs()[j]];
    if (!inner) {
      return absl::InvalidArgumentError(absl::StrCat("function '", f.name(), "' output ", j, " is an omitted input"));
    }
    // A body that returns one of its inputs reaches a graph output through an Identity
    // that keeps the output's own name.
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(out, inner, GraphOutputs::kKeepNames));
  }
  OS_RETURN_IF_ERROR(rw.EraseNode(call));
  result.Count("calls-inlined");
  return absl::OkStatus();
}

namespace {

enum class When { kAlways, kSimplifies };

// when=simplifies: the call's body cannot make the graph larger once simplified.
bool InliningSimplifies(const Node& call, const Function& f) {
  int64_t nodes = 0;
  for (const Node* n : f.body().nodes()) nodes += n->Is("Constant") ? 0 : 1;
  if (nodes <= 1) return true;
  for (const Value* v : call.inputs())
    if (v && !GetConstant(v)) return false;
  return true;  // every input constant: the body folds
}

Status InlineIn(Model& model, Graph& g, When when, PassResult& result, int depth) {
  if (depth > kMaxDepth) return absl::FailedPreconditionError("function calls nest too deep (recursive functions?)");
  bool again = false;
  for (Node* n = g.first_node(); n;) {
    Node* next = n->next();
    const Function* f = model.FindFunction(n->domain(), n->op_type(), n->proto().overload());
    if (f && when == When::kSimplifies && !InliningSimplifies(*n, *f)) {
      result.Count("calls-kept");
    } else if (f) {
      OS_RETURN_IF_ERROR(InlineCall(model, n, *f, result));
      again = true;  // the inlined body may call functions too
    } else {
      for (Graph* sub : n->subgraphs()) OS_RETURN_IF_ERROR(InlineIn(model, *sub, when, result, depth));
    }
    n = next;
  }
  return again ? InlineIn(model, g, when, result, depth + 1) : absl::OkStatus();
}

class InlineFunctionsPass : public Pass {
 public:
  InlineFunctionsPass(bool keep, When when) : keep_(keep), when_(when) {}
  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    if (model.functions().empty()) return result;
    OS_RETURN_IF_ERROR(InlineIn(model, model.graph(), when_, result, 0));
    // Only inlining changes the model; a run that kept every call reports no change.
    result.changed = result.counts.contains("calls-inlined");
    if (!keep_ && result.changed) {
      result.Count("functions-removed", Rewriter().RemoveUncalledFunctions(model));
      // The functions' domain (`local`, ...) is imported for nothing now; some runtimes
      // (OpenVINO) refuse a file importing a domain they do not know.
      result.Count("opset-imports-removed", static_cast<int64_t>(RemoveUnusedOpsetImports(model).size()));
    }
    return result;
  }

 private:
  bool keep_;
  When when_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateInlineFunctionsPass(const PassOptions& o) {
  return std::make_unique<InlineFunctionsPass>(o.Bool("keep-functions"),
                                               o.String("when") == "always" ? When::kAlways : When::kSimplifies);
}

}  // namespace onnxsurgeon::passes
