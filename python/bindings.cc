// onnxsurgeon._core: thin pybind11 bindings over core/. Python objects for graphs, nodes
// and values are views into the C++ Model; each keeps its parent alive
// (reference_internal), so `model.graph.nodes[0].outputs[0].uses()` is always safe while
// no node is erased behind it.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/inspect/inspect.h"
#include "core/interop/onnx_interop.h"
#include "core/io/model_io.h"
#include "core/pass/pass_manager.h"
#include "core/pass/pipeline.h"
#include "core/inspect/json_writer.h"
#include "core/rewrite/greedy_driver.h"
#include "core/rewrite/rule.h"
#include "core/target/profile.h"
#include "passes/target/check.h"
#include "passes/target/planner.h"

namespace py = pybind11;
using namespace onnxsurgeon;

namespace {

// Model errors surface as onnxsurgeon.OnnxSurgeonError (a ValueError).
PyObject* g_error = nullptr;

[[noreturn]] void Raise(const absl::Status& s) {
  PyErr_SetString(g_error, std::string(s.message()).c_str());
  throw py::error_already_set();
}

template <typename T>
T Unwrap(absl::StatusOr<T> v) {
  if (!v.ok()) Raise(v.status());
  return *std::move(v);
}

void Check(const absl::Status& s) {
  if (!s.ok()) Raise(s);
}

ExternalDataMode ParseMode(const std::string& mode) {
  if (mode == "keep") return ExternalDataMode::kKeep;
  if (mode == "inline") return ExternalDataMode::kInline;
  if (mode == "all") return ExternalDataMode::kAll;
  throw py::value_error("external_data must be 'keep', 'inline' or 'all', not '" + mode + "'");
}

py::list ReportsToList(const std::vector<PassRunReport>& reports) {
  py::list out;
  for (const auto& r : reports) {
    py::dict d;
    d["pass"] = r.name;
    d["changed"] = r.result.changed;
    d["counts"] = r.result.counts;
    d["seconds"] = r.seconds;
    d["histogram_before"] = r.histogram_before;
    d["histogram_after"] = r.histogram_after;
    out.append(d);
  }
  return out;
}

// Python values -> AttributeProto: int, float, str/bytes, list of int, list of float.
onnx::AttributeProto ToAttribute(const std::string& name, const py::handle& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  if (py::isinstance<py::bool_>(v) || py::isinstance<py::int_>(v)) {
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v.cast<int64_t>());
  } else if (py::isinstance<py::float_>(v)) {
    a.set_type(onnx::AttributeProto::FLOAT);
    a.set_f(v.cast<float>());
  } else if (py::isinstance<py::str>(v) || py::isinstance<py::bytes>(v)) {
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s(v.cast<std::string>());
  } else if (py::isinstance<py::sequence>(v)) {
    auto seq = v.cast<py::sequence>();
    bool all_int = true;
    for (auto item : seq) all_int &= py::isinstance<py::int_>(item);
    if (all_int) {
      a.set_type(onnx::AttributeProto::INTS);
      for (auto item : seq) a.add_ints(item.cast<int64_t>());
    } else {
      a.set_type(onnx::AttributeProto::FLOATS);
      for (auto item : seq) a.add_floats(item.cast<float>());
    }
  } else {
    throw py::type_error("attribute '" + name + "': use int, float, str, or a list of int or float");
  }
  return a;
}

std::vector<onnx::AttributeProto> ToAttributes(const py::dict& attrs) {
  std::vector<onnx::AttributeProto> out;
  for (auto [k, v] : attrs) out.push_back(ToAttribute(k.cast<std::string>(), v));
  return out;
}

// A rule whose check and replacement are Python callables.
std::unique_ptr<PatternRule> MakePythonRule(const std::string& name, pattern::Pattern pattern, int root, py::function replace,
                                            py::object check, int benefit) {
  PatternRule::Replace rep = [replace, name](const pattern::Match& m, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
    try {
      py::object result = replace(py::cast(&m, py::return_value_policy::reference), py::cast(&rw, py::return_value_policy::reference));
      if (py::isinstance<Value>(result)) return std::vector<Value*>{result.cast<Value*>()};
      return result.cast<std::vector<Value*>>();
    } catch (py::error_already_set& e) {
      return absl::InternalError(absl::StrCat("Python replacement of rule '", name, "' raised: ", e.what()));
    } catch (const py::cast_error& e) {
      return absl::InternalError(absl::StrCat("rule '", name, "': the replacement must return a Value or a list of Values"));
    }
  };
  PatternRule::Check chk;
  if (!check.is_none()) {
    py::function fn = check;
    chk = [fn](const pattern::Match& m, std::string* why) {
      py::object r = fn(py::cast(&m, py::return_value_policy::reference));
      if (py::isinstance<py::str>(r)) {  // a string is a refusal with its reason
        if (why) *why = r.cast<std::string>();
        return false;
      }
      bool ok = r.cast<bool>();
      if (!ok && why) *why = "refused by the rule's check";
      return ok;
    };
  }
  return std::make_unique<PatternRule>(name, std::move(pattern), root, std::move(rep), std::move(chk), benefit);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "onnxsurgeon C++ core (use the onnxsurgeon package, not this module)";
  static py::exception<std::runtime_error> error(m, "OnnxSurgeonError", PyExc_ValueError);
  g_error = error.ptr();

  py::class_<Value>(m, "Value")
      .def_property_readonly("name", &Value::name)
      .def("set_name", [](Value& v, std::string name) { Check(v.SetName(std::move(name))); })
      .def_property_readonly("producer", &Value::producer, py::return_value_policy::reference)
      .def("uses", [](const Value& v) {
            py::list out;
            for (const Use& u : v.uses()) out.append(py::make_tuple(py::cast(u.node, py::return_value_policy::reference), u.input_index));
            return out;
          })
      .def_property_readonly("is_graph_input", &Value::IsGraphInput)
      .def_property_readonly("is_graph_output", &Value::IsGraphOutput)
      .def_property_readonly("is_initializer", &Value::IsInitializer)
      .def_property_readonly("type", [](const Value& v) { return TypeToString(v.type()); })
      .def("replace_all_uses_with",
           [](Value& v, Value& other, bool allow_graph_outputs) { Check(v.ReplaceAllUsesWith(&other, allow_graph_outputs)); },
           py::arg("other"), py::arg("allow_graph_outputs") = false)
      .def("__repr__", [](const Value& v) { return "<Value '" + v.name() + "' " + TypeToString(v.type()) + ">"; });

  py::class_<Node>(m, "Node")
      .def_property_readonly("op_type", &Node::op_type)
      .def_property_readonly("domain", &Node::domain)
      .def_property("name", &Node::name, &Node::set_name)
      .def_property_readonly("inputs", [](const Node& n) { return n.inputs(); }, py::return_value_policy::reference)
      .def_property_readonly("outputs", [](const Node& n) { return n.outputs(); }, py::return_value_policy::reference)
      .def_property_readonly("graph", &Node::graph, py::return_value_policy::reference)
      .def("set_input", [](Node& n, size_t i, Value* v) { n.SetInput(i, v); }, py::arg("index"), py::arg("value").none(true))
      .def_property_readonly("attribute_names", [](const Node& n) {
            std::vector<std::string> names;
            for (const auto& a : n.attributes()) names.push_back(a.name());
            return names;
          })
      .def("attribute", [](const Node& n, const std::string& name) -> py::object {
            const Attribute* a = n.FindAttribute(name);
            if (!a) throw py::key_error(name);
            const auto& p = a->proto();
            switch (p.type()) {
              case onnx::AttributeProto::INT: return py::int_(p.i());
              case onnx::AttributeProto::FLOAT: return py::float_(p.f());
              case onnx::AttributeProto::STRING: return py::bytes(p.s());
              case onnx::AttributeProto::INTS: return py::cast(std::vector<int64_t>(p.ints().begin(), p.ints().end()));
              case onnx::AttributeProto::FLOATS: return py::cast(std::vector<float>(p.floats().begin(), p.floats().end()));
              case onnx::AttributeProto::STRINGS: {
                py::list l;
                for (const auto& s : p.strings()) l.append(py::bytes(s));
                return l;
              }
              default: return py::bytes(p.SerializeAsString());  // serialized AttributeProto
            }
          })
      .def_property_readonly("subgraphs", &Node::subgraphs, py::return_value_policy::reference)
      .def("__repr__", [](const Node& n) { return "<Node '" + n.name() + "' " + (n.domain().empty() ? "" : n.domain() + "::") + n.op_type() + ">"; });

  py::class_<Graph>(m, "Graph")
      .def_property_readonly("name", &Graph::name)
      .def_property_readonly("nodes", [](const Graph& g) {
            std::vector<Node*> out(g.nodes().begin(), g.nodes().end());
            return out;
          }, py::return_value_policy::reference_internal)
      .def_property_readonly("inputs", &Graph::inputs, py::return_value_policy::reference_internal)
      .def_property_readonly("outputs", &Graph::outputs, py::return_value_policy::reference_internal)
      .def_property_readonly("initializers", &Graph::initializers, py::return_value_policy::reference_internal)
      .def("value", [](const Graph& g, const std::string& name) {
            Value* v = g.LookupValue(name);
            if (!v) throw py::key_error(name);
            return v;
          }, py::return_value_policy::reference_internal)
      .def("__len__", &Graph::num_nodes)
      .def("__repr__", [](const Graph& g) { return "<Graph '" + g.name() + "' with " + std::to_string(g.num_nodes()) + " nodes>"; });

  py::class_<Model>(m, "Model")
      .def_property_readonly("graph", py::overload_cast<>(&Model::graph), py::return_value_policy::reference_internal)
      .def_property_readonly("ir_version", [](const Model& m) { return m.proto().ir_version(); })
      .def_property_readonly("opset_imports", [](const Model& m) {
            std::map<std::string, int64_t> out;
            for (const auto& op : m.proto().opset_import()) out[op.domain()] = op.version();
            return out;
          })
      .def("opset_version", &Model::OpsetVersion, py::arg("domain") = "")
      .def_property_readonly("function_names", [](const Model& m) {
            std::vector<std::string> out;
            for (const auto& f : m.functions()) out.push_back(f->domain() + "::" + f->name());
            return out;
          })
      .def("save", [](const Model& m, const std::string& path, const std::string& external_data, size_t size_threshold,
                      const std::string& location) {
            SaveOptions o;
            o.external_data = ParseMode(external_data);
            o.size_threshold = size_threshold;
            o.location = location;
            py::gil_scoped_release release;
            auto s = SaveModel(m, path, o);
            py::gil_scoped_acquire acquire;
            Check(s);
          }, py::arg("path"), py::arg("external_data") = "keep", py::arg("size_threshold") = 1024, py::arg("location") = "")
      .def("to_bytes", [](const Model& m) { return py::bytes(Unwrap(SaveModelToBytes(m))); })
      .def("to_text", [](const Model& m) { return PrintModelText(m); })
      .def("inspect_json", [](const Model& m) { return FormatInspectJson(Inspect(m)); })
      .def("check", [](const Model& m, bool full) { Check(CheckModel(m, full)); }, py::arg("full") = true)
      .def("infer_shapes", [](Model& m) { return Unwrap(InferShapes(m)); })
      .def("run", [](Model& m, const std::string& pipeline, bool verify_each) {
            auto items = Unwrap(ParsePipeline(pipeline));
            PassManagerOptions o;
            o.verify_each = verify_each;
            return ReportsToList(Unwrap(RunPipeline(m, items, o)));
          }, py::arg("pipeline"), py::arg("verify_each") = false);

  // ---- rules defined in Python (onnxsurgeon.rules wraps these) ----------------------
  py::class_<pattern::Pattern>(m, "_Pattern")
      .def(py::init<std::string>())
      .def("any", [](pattern::Pattern& p, std::string capture) { return p.Any(std::move(capture)).id; }, py::arg("capture") = "")
      .def("const", [](pattern::Pattern& p, std::string capture) { return p.Const(std::move(capture)).id; }, py::arg("capture") = "")
      .def("scalar", [](pattern::Pattern& p, std::string capture, double value, double tol) {
            return p.ScalarNear(std::move(capture), value, tol).id;
          }, py::arg("capture"), py::arg("value"), py::arg("tolerance") = 1e-6)
      .def("or_", [](pattern::Pattern& p, const std::vector<int>& alts, std::string capture) {
            std::vector<pattern::ValueRef> refs;
            for (int a : alts) refs.push_back({a});
            return p.Or(refs, std::move(capture)).id;
          }, py::arg("alternatives"), py::arg("capture") = "")
      .def("op", [](pattern::Pattern& p, std::string op_type, const std::vector<int>& inputs, std::string domain,
                    bool commutative, std::string capture, bool allow_external_uses, py::dict int_attrs,
                    int64_t opset_min, int64_t opset_max) {
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
          }, py::arg("op_type"), py::arg("inputs"), py::arg("domain") = "", py::arg("commutative") = false,
          py::arg("capture") = "", py::arg("allow_external_uses") = false, py::arg("int_attrs") = py::dict(),
          py::arg("opset_min") = 0, py::arg("opset_max") = 0)
      .def("out", [](pattern::Pattern& p, int op, int i) { return pattern::OpRef(&p, op).Out(i).id; });

  py::class_<pattern::Match>(m, "Match")
      .def("__getitem__", [](const pattern::Match& mt, const std::string& k) {
            try { return mt.value(k); } catch (const std::out_of_range& e) { throw py::key_error(e.what()); }
          }, py::return_value_policy::reference)
      .def("node", [](const pattern::Match& mt, const std::string& k) {
            try { return mt.node(k); } catch (const std::out_of_range& e) { throw py::key_error(e.what()); }
          }, py::return_value_policy::reference)
      .def("scalar", [](const pattern::Match& mt, const std::string& k) {
            try { return mt.scalar(k); } catch (const std::out_of_range& e) { throw py::key_error(e.what()); }
          })
      .def("__contains__", &pattern::Match::has)
      .def_property_readonly("root", &pattern::Match::root, py::return_value_policy::reference);

  py::class_<Rewriter>(m, "Rewriter")
      .def("op", [](Rewriter& rw, const std::string& op, std::vector<Value*> inputs, py::dict attrs, const std::string& domain) {
            return rw.Op(op, std::move(inputs), ToAttributes(attrs), domain);
          }, py::arg("op_type"), py::arg("inputs"), py::arg("attrs") = py::dict(), py::arg("domain") = "",
          py::return_value_policy::reference)
      .def("create", [](Rewriter& rw, const std::string& op, std::vector<Value*> inputs, int num_outputs, py::dict attrs,
                        const std::string& domain) {
            return rw.Create(op, std::move(inputs), ToAttributes(attrs), num_outputs, domain);
          }, py::arg("op_type"), py::arg("inputs"), py::arg("num_outputs") = 1, py::arg("attrs") = py::dict(),
          py::arg("domain") = "", py::return_value_policy::reference)
      .def("scalar_float", &Rewriter::ScalarFloat, py::arg("value"), py::arg("data_type") = 1, py::return_value_policy::reference)
      .def("int64s", &Rewriter::Int64s, py::return_value_policy::reference)
      .def_property_readonly("rule", &Rewriter::rule);

  py::class_<PatternRule>(m, "_Rule")
      .def(py::init([](const std::string& name, const pattern::Pattern& p, int root, py::function replace, py::object check,
                       int benefit) { return MakePythonRule(name, p, root, std::move(replace), std::move(check), benefit); }),
           py::arg("name"), py::arg("pattern"), py::arg("root"), py::arg("replace"), py::arg("check") = py::none(),
           py::arg("benefit") = 1)
      .def_property_readonly("name", &PatternRule::name);

  m.def("_apply_rules", [](Model& model, const std::vector<PatternRule*>& rules, int64_t max_rewrites, py::object explain) {
        std::vector<const RewriteRule*> rs(rules.begin(), rules.end());
        GreedyOptions o;
        o.max_rewrites = max_rewrites;
        if (!explain.is_none()) {
          py::function fn = explain;
          o.explain = [fn](const std::string& rule, const Node& node, const std::string& why) { fn(rule, node.name(), why); };
        }
        return Unwrap(ApplyRulesGreedily(model, rs, o));
      }, py::arg("model"), py::arg("rules"), py::arg("max_rewrites") = -1, py::arg("explain") = py::none());

  m.def("load", [](const std::string& path) {
        py::gil_scoped_release release;
        auto model = LoadModel(path);
        py::gil_scoped_acquire acquire;
        return Unwrap(std::move(model));
      }, py::arg("path"));
  m.def("load_bytes", [](py::bytes data, const std::string& base_dir) {
        LoadOptions o;
        o.base_dir = base_dir;
        return Unwrap(LoadModelFromBytes(std::string(data), o));
      }, py::arg("data"), py::arg("base_dir") = "");
  m.def("parse_text", [](const std::string& text) { return Unwrap(ParseModelText(text)); });
  m.def("passes", []() {
        py::list out;
        for (const PassInfo& p : AllPasses()) {
          py::dict d;
          d["name"] = p.name;
          d["summary"] = p.summary;
          py::list opts;
          for (const auto& o : p.options) opts.append(py::dict(py::arg("name") = o.name, py::arg("help") = o.help, py::arg("default") = o.default_value));
          d["options"] = opts;
          out.append(d);
        }
        return out;
      });
  // check --target --json, as text (onnxsurgeon.check_target parses it). input_shapes as
  // in --input-shapes: the inputs it names count as made static by --target.
  m.def("check_target", [](const Model& model, const std::string& target, const std::string& input_shapes,
                           const std::string& model_name) {
    target::Profile profile = Unwrap(target::LoadProfile(target));
    target::CheckOptions options;
    options.inputs_with_shapes = target::InputShapeNames(input_shapes);
    return target::CheckReportJson(target::CheckTarget(model, profile, options), profile, model_name);
  });
  m.def("check_pipeline", [](const std::string& pipeline) { Unwrap(ParsePipeline(pipeline)); });
}
