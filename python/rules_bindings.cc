// The rewrite-rule bindings: patterns, matches, the Rewriter, rules whose check and
// replacement are Python callables, and the passes such rule sets are registered as.
#include "python/rules_bindings.h"

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

#include "core/inspect/inspect.h"
#include "core/interop/onnx_interop.h"
#include "core/io/exporter.h"
#include "core/io/model_io.h"
#include "core/pass/pass_manager.h"
#include "core/pass/pattern_pass.h"
#include "core/pass/pipeline.h"
#include "core/profile/profile.h"
#include "core/rewrite/greedy_driver.h"
#include "core/rewrite/rule.h"
#include "core/verify/bisect.h"
#include "core/verify/compare.h"
#include "core/verify/segments.h"
#include "passes/registry.h"
#include "passes/targeting/check.h"
#include "passes/targeting/planner.h"
#include "python/attributes.h"
#include "python/errors.h"
#include "python/rules_bindings.h"

namespace py = pybind11;

namespace onnxsurgeon::bindings {
namespace {

// Match.__getitem__/node/scalar: a lookup by capture name; an unknown name is a KeyError.
template <typename T>
auto CaptureLookup(T (pattern::Match::*lookup)(std::string_view) const) {
  return [lookup](const pattern::Match& mt, const std::string& k) {
    try {
      return (mt.*lookup)(k);
    } catch (const std::out_of_range& e) {
      throw py::key_error(e.what());
    }
  };
}

// A rule whose check and replacement are Python callables.
std::unique_ptr<PatternRule<>> MakePythonRule(const std::string& name, pattern::Pattern pattern, int root,
                                              py::function replace, py::object check, int benefit) {
  auto rep = [replace, name](const pattern::Match& m, NoPlan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
    try {
      py::object result =
          replace(py::cast(&m, py::return_value_policy::reference), py::cast(&rw, py::return_value_policy::reference));
      if (py::isinstance<Value>(result)) return std::vector<Value*>{result.cast<Value*>()};
      return result.cast<std::vector<Value*>>();
    } catch (py::error_already_set& e) {
      return absl::InternalError(absl::StrCat("Python replacement of rule '", name, "' raised: ", e.what()));
    } catch (const py::cast_error& e) {
      return absl::InternalError(
          absl::StrCat("rule '", name, "': the replacement must return a Value or a list of Values"));
    }
  };
  auto chk = [check](const pattern::Match& m) -> Verdict<> {
    if (check.is_none()) return Matched();
    py::object r = check(py::cast(&m, py::return_value_policy::reference));
    if (py::isinstance<py::str>(r)) return Refuse(r.cast<std::string>());  // a string is a refusal with its reason
    if (!r.cast<bool>()) return Refuse("refused by the rule's check");
    return Matched();
  };
  return std::make_unique<PatternRule<>>(name, std::move(pattern), root, std::move(chk), std::move(rep), benefit);
}

// A rule set registered from Python under a pass name (onnxsurgeon.rules.register), so
// pipelines can name it. The Python side keeps the rules alive for the process.
class PythonRulesPass : public Pass {
 public:
  PythonRulesPass(std::vector<const RewriteRule*> rules, int64_t max_rewrites)
      : rules_(std::move(rules)), max_rewrites_(max_rewrites) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    GreedyOptions base;
    base.max_rewrites = max_rewrites_;
    OS_ASSIGN_OR_RETURN(auto counts, ApplyRulesGreedily(model, rules_, WithDebugPatterns(base, context)));
    PassResult result;
    for (const auto& [rule, n] : counts) result.Count(rule, n);
    return result;
  }

 private:
  std::vector<const RewriteRule*> rules_;
  int64_t max_rewrites_;
};

}  // namespace

// Rules defined in Python (onnxsurgeon.rules wraps these).
void BindRules(py::module_& m) {
  // ---- rules defined in Python (onnxsurgeon.rules wraps these) ----------------------
  py::class_<pattern::Pattern>(m, "_Pattern")
      .def(py::init<std::string>())
      .def(
          "any", [](pattern::Pattern& p, std::string capture) { return p.Any(std::move(capture)).id; },
          py::arg("capture") = "")
      .def(
          "const", [](pattern::Pattern& p, std::string capture) { return p.Const(std::move(capture)).id; },
          py::arg("capture") = "")
      .def(
          "scalar",
          [](pattern::Pattern& p, std::string capture, double value, double tol) {
            return p.ScalarNear(std::move(capture), value, tol).id;
          },
          py::arg("capture"), py::arg("value"), py::arg("tolerance") = 1e-6)
      .def(
          "or_",
          [](pattern::Pattern& p, const std::vector<int>& alts, std::string capture) {
            std::vector<pattern::ValueRef> refs;
            for (int a : alts) refs.push_back({a});
            return p.Or(refs, std::move(capture)).id;
          },
          py::arg("alternatives"), py::arg("capture") = "")
      .def(
          "op",
          [](pattern::Pattern& p, std::string op_type, const std::vector<int>& inputs, std::string domain,
             bool commutative, std::string capture, bool allow_external_uses, py::dict int_attrs, int64_t opset_min,
             int64_t opset_max) {
            std::vector<pattern::ValueRef> refs;
            for (int i : inputs) refs.push_back({i});
            pattern::OpRef op = p.Op(std::move(op_type), refs);
            if (!domain.empty()) op.Domain(domain);
            if (commutative) op.Commutative();
            if (!capture.empty()) op.Capture(capture);
            if (allow_external_uses) op.AllowExternalUses();
            if (opset_min > 0 || opset_max > 0) op.Opset(opset_min, opset_max > 0 ? opset_max : INT64_MAX);
            for (auto [k, v] : int_attrs) op.AttrInt(k.cast<std::string>(), v.cast<int64_t>());
            return op.id();
          },
          py::arg("op_type"), py::arg("inputs"), py::arg("domain") = "", py::arg("commutative") = false,
          py::arg("capture") = "", py::arg("allow_external_uses") = false, py::arg("int_attrs") = py::dict(),
          py::arg("opset_min") = 0, py::arg("opset_max") = 0)
      .def("out", [](pattern::Pattern& p, int op, int i) { return pattern::OpRef(&p, op).Out(i).id; });

  py::class_<pattern::Match>(m, "Match")
      .def("__getitem__", CaptureLookup(&pattern::Match::value), py::return_value_policy::reference)
      .def("node", CaptureLookup(&pattern::Match::node), py::return_value_policy::reference)
      .def("scalar", CaptureLookup(&pattern::Match::scalar))
      .def("__contains__", &pattern::Match::has)
      .def_property_readonly("root", &pattern::Match::root, py::return_value_policy::reference);

  py::class_<Rewriter>(m, "Rewriter")
      .def(
          "op",
          [](Rewriter& rw, const std::string& op, std::vector<Value*> inputs, py::dict attrs,
             const std::string& domain) { return rw.Op(op, std::move(inputs), python::ToAttributes(attrs), domain); },
          py::arg("op_type"), py::arg("inputs"), py::arg("attrs") = py::dict(), py::arg("domain") = "",
          py::return_value_policy::reference)
      .def(
          "create",
          [](Rewriter& rw, const std::string& op, std::vector<Value*> inputs, int num_outputs, py::dict attrs,
             const std::string& domain) {
            return rw.Create(op, std::move(inputs), python::ToAttributes(attrs), num_outputs, domain);
          },
          py::arg("op_type"), py::arg("inputs"), py::arg("num_outputs") = 1, py::arg("attrs") = py::dict(),
          py::arg("domain") = "", py::return_value_policy::reference)
      .def(
          "scalar_float",
          [](Rewriter& rw, float value, int32_t data_type) { return Unwrap(rw.ScalarFloat(value, data_type)); },
          py::arg("value"), py::arg("data_type") = 1, py::return_value_policy::reference)
      .def("int64s", &Rewriter::Int64s, py::return_value_policy::reference)
      .def("set_input", &Rewriter::SetInput, py::arg("node"), py::arg("index"), py::arg("value").none(true))
      .def(
          "replace_all_uses_with",
          [](Rewriter& rw, Value* from, Value* to, const std::string& graph_outputs) {
            GraphOutputs mode = GraphOutputs::kRefuse;
            if (graph_outputs == "keep-names") mode = GraphOutputs::kKeepNames;
            else if (graph_outputs == "take-value") mode = GraphOutputs::kTakeValue;
            else if (graph_outputs != "refuse")
              throw py::value_error("graph_outputs is one of 'refuse', 'keep-names', 'take-value'");
            Check(rw.ReplaceAllUsesWith(from, to, mode));
          },
          py::arg("value"), py::arg("replacement"), py::arg("graph_outputs") = "refuse")
      .def_property_readonly("rule", &Rewriter::rule);

  py::class_<PatternRule<>>(m, "_Rule")
      .def(py::init([](const std::string& name, const pattern::Pattern& p, int root, py::function replace,
                       py::object check, int benefit) {
             return MakePythonRule(name, p, root, std::move(replace), std::move(check), benefit);
           }),
           py::arg("name"), py::arg("pattern"), py::arg("root"), py::arg("replace"), py::arg("check") = py::none(),
           py::arg("benefit") = 1)
      .def_property_readonly("name", &PatternRule<>::name);

  m.def(
      "_apply_rules",
      [](Model& model, const std::vector<PatternRule<>*>& rules, int64_t max_rewrites, py::object explain) {
        std::vector<const RewriteRule*> rs(rules.begin(), rules.end());
        GreedyOptions o;
        o.max_rewrites = max_rewrites;
        if (!explain.is_none()) {
          py::function fn = explain;
          o.explain = [fn](const std::string& rule, const Node& node, const std::string& why) {
            fn(rule, node.name(), why);
          };
        }
        return Unwrap(ApplyRulesGreedily(model, rs, o));
      },
      py::arg("model"), py::arg("rules"), py::arg("max_rewrites") = -1, py::arg("explain") = py::none());

  m.def(
      "load",
      [](const std::string& path) {
        py::gil_scoped_release release;
        auto model = LoadModel(path);
        py::gil_scoped_acquire acquire;
        return Unwrap(std::move(model));
      },
      py::arg("path"));
  m.def(
      "load_bytes",
      [](py::bytes data, const std::string& base_dir) {
        LoadOptions o;
        o.base_dir = base_dir;
        return Unwrap(LoadModelFromBytes(std::string(data), o));
      },
      py::arg("data"), py::arg("base_dir") = "");
  // A rule set as a pass pipelines can name (onnxsurgeon.rules.register).
  m.def(
      "_register_rules",
      [](const std::string& name, const std::string& summary, const std::vector<PatternRule<>*>& rules) {
        std::vector<const RewriteRule*> rs(rules.begin(), rules.end());
        PassInfo info{name,
                      summary.empty() ? "Rewrite rules registered from Python" : summary,
                      {option::Int("max-rewrites", -1, "stop after this many rewrites (-1: 10 x nodes + 1000)", -1)},
                      [rs](const PassOptions& o) -> StatusOr<std::unique_ptr<Pass>> {
                        return std::make_unique<PythonRulesPass>(rs, o.Int("max-rewrites"));
                      }};
        Check(RegisterPass(std::move(info)));
      },
      py::arg("name"), py::arg("summary"), py::arg("rules"));
}

}  // namespace onnxsurgeon::bindings
