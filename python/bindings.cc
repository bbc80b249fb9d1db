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
  m.def("check_pipeline", [](const std::string& pipeline) { Unwrap(ParsePipeline(pipeline)); });
}
