// onnxsurgeon._core: thin pybind11 bindings over core/. Python objects for graphs, nodes
// and values are views into the C++ Model; each keeps its parent alive
// (reference_internal), so `model.graph.nodes[0].outputs[0].uses()` is always safe while
// no node is erased behind it.
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
using namespace onnxsurgeon;
using namespace onnxsurgeon::bindings;

namespace {

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

// A value's type as plain Python data for onnxsurgeon.ValueType:
// (kind, elem_type, shape, inner, text); shape None when unknown, dims int / str / None.
py::object TypeTuple(const onnx::TypeProto& t) {
  auto shape_of = [](bool has, const onnx::TensorShapeProto& shape) -> py::object {
    if (!has) return py::none();
    py::list dims;
    for (const auto& d : shape.dim()) {
      if (d.has_dim_value()) dims.append(py::int_(d.dim_value()));
      else if (d.has_dim_param()) dims.append(py::str(d.dim_param()));
      else dims.append(py::none());
    }
    return py::tuple(dims);
  };
  std::string text = TypeToString(&t);
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return py::make_tuple("tensor", t.tensor_type().elem_type(),
                            shape_of(t.tensor_type().has_shape(), t.tensor_type().shape()), py::none(), text);
    case onnx::TypeProto::kSparseTensorType:
      return py::make_tuple("sparse_tensor", t.sparse_tensor_type().elem_type(),
                            shape_of(t.sparse_tensor_type().has_shape(), t.sparse_tensor_type().shape()), py::none(),
                            text);
    case onnx::TypeProto::kSequenceType:
      return py::make_tuple("sequence", 0, py::none(), TypeTuple(t.sequence_type().elem_type()), text);
    case onnx::TypeProto::kOptionalType:
      return py::make_tuple("optional", 0, py::none(), TypeTuple(t.optional_type().elem_type()), text);
    case onnx::TypeProto::kMapType:
      return py::make_tuple("map", t.map_type().key_type(), py::none(), TypeTuple(t.map_type().value_type()), text);
    default: return py::make_tuple("unknown", 0, py::none(), py::none(), text);
  }
}

// Keeps a Python object (a bytes object whose buffer the tensors view) alive from C++;
// released under the GIL, whichever thread drops the last tensor.
// The deleter of HoldPythonObject's owners; named so that std::get_deleter recognizes an
// owner that is a Python object (to hand the same bytes object back, see _to_parts).
struct ReleasePythonObject {
  void operator()(const void* p) const {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(const_cast<void*>(p)));
  }
};

std::shared_ptr<const void> HoldPythonObject(py::object obj) {
  PyObject* raw = obj.release().ptr();
  return std::shared_ptr<const void>(raw, ReleasePythonObject{});
}

// The Python object a HoldPythonObject owner holds.
py::object PythonObjectOf(const std::shared_ptr<const void>& owner) {
  if (!owner || !std::get_deleter<ReleasePythonObject>(owner)) throw std::logic_error("not a Python object");
  return py::reinterpret_borrow<py::object>(static_cast<PyObject*>(const_cast<void*>(owner.get())));
}

// Deferred bytes whose source is a Python object with a `raw_data` attribute (an
// onnx.TensorProto): read (one copy, by protobuf) on first use, under the GIL.
DeferredPayload DeferRawData(py::object tensor) {
  std::shared_ptr<const void> source = HoldPythonObject(std::move(tensor));
  auto fetch = [source]() -> std::pair<std::shared_ptr<const void>, std::string_view> {
    py::gil_scoped_acquire gil;
    py::object data = PythonObjectOf(source).attr("raw_data");
    if (!PyBytes_Check(data.ptr())) throw py::type_error("raw_data is not bytes");
    std::string_view view(PyBytes_AS_STRING(data.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(data.ptr())));
    return {HoldPythonObject(std::move(data)), view};
  };
  return DeferredPayload{source, fetch};
}

// A detached payload as a Python bytes object: the bytes object it views when it is one
// whole (what _load_parts was given and no pass replaced), else a copy.
py::object PayloadAsBytes(const DetachedPayload& p) {
  if (p.owner && std::get_deleter<ReleasePythonObject>(p.owner)) {
    PyObject* obj = static_cast<PyObject*>(const_cast<void*>(p.owner.get()));
    if (PyBytes_Check(obj) && PyBytes_AS_STRING(obj) == p.bytes.data() &&
        static_cast<size_t>(PyBytes_GET_SIZE(obj)) == p.bytes.size()) {
      return py::reinterpret_borrow<py::object>(obj);
    }
  }
  return py::bytes(p.bytes.data(), p.bytes.size());
}

// Serialized model bytes owned by C++, exposed to Python through the buffer protocol:
// memoryview(buffer) reads them without a copy (onnx.ModelProto.ParseFromString takes it).
struct OwnedBytes {
  std::string bytes;
};

// Value and Node.
void BindValuesAndNodes(py::module_& m) {
  py::class_<Value>(m, "Value")
      .def_property_readonly("name", &Value::name)
      .def("set_name", [](Value& v, std::string name) { Check(v.SetName(std::move(name))); })
      .def("producer", &Value::producer, py::return_value_policy::reference)
      .def("uses",
           [](const Value& v) {
             py::list out;
             for (const Use& u : v.uses())
               out.append(py::make_tuple(py::cast(u.node, py::return_value_policy::reference), u.input_index));
             return out;
           })
      .def_property_readonly("is_graph_input", &Value::IsGraphInput)
      .def_property_readonly("is_graph_output", &Value::IsGraphOutput)
      .def_property_readonly("is_initializer", &Value::IsInitializer)
      .def("_type_tuple", [](const Value& v) -> py::object { return v.type() ? TypeTuple(*v.type()) : py::none(); })
      .def(
          "replace_all_uses_with",
          [](Value& v, Value& other, bool allow_graph_outputs) {
            // Through the Rewriter like every mutation; graph outputs only when asked.
            Rewriter rw;
            rw.SetRule("python");
            Check(rw.ReplaceAllUsesWith(&v, &other,
                                        allow_graph_outputs ? GraphOutputs::kTakeValue : GraphOutputs::kRefuse));
          },
          py::arg("other"), py::arg("allow_graph_outputs") = false)
      .def("__repr__", [](const Value& v) { return "<Value '" + v.name() + "' " + TypeToString(v.type()) + ">"; });

  py::class_<Node>(m, "Node")
      .def_property_readonly("op_type", &Node::op_type)
      .def_property_readonly("domain", &Node::domain)
      .def_property("name", &Node::name, &Node::set_name)
      .def_property_readonly(
          "inputs", [](const Node& n) { return n.inputs(); }, py::return_value_policy::reference)
      .def_property_readonly(
          "outputs", [](const Node& n) { return n.outputs(); }, py::return_value_policy::reference)
      .def_property_readonly("graph", &Node::graph, py::return_value_policy::reference)
      // Outside a rule: a Rewriter without a driver. Inside one, use the rule's
      // rewriter.set_input, which keeps the driver's worklist right.
      .def(
          "set_input",
          [](Node& n, size_t i, Value* v) {
            Rewriter rw;
            rw.SetRule("python");
            rw.SetInput(&n, i, v);
          },
          py::arg("index"), py::arg("value").none(true))
      .def_property_readonly("attribute_names",
                             [](const Node& n) {
                               std::vector<std::string> names;
                               for (const auto& a : n.attributes()) names.push_back(a.name());
                               return names;
                             })
      .def("attribute",
           [](const Node& n, const std::string& name) -> py::object {
             const Attribute* a = n.FindAttribute(name);
             if (!a) throw py::key_error(name);
             if (a->type() != onnx::AttributeProto::GRAPH && a->type() != onnx::AttributeProto::GRAPHS) {
               return python::FromAttribute(a->proto());
             }
             py::module_ onnx_module = py::module_::import("onnx");
             py::list graphs;
             for (const auto& g : a->graphs()) {
               py::object proto = onnx_module.attr("GraphProto")();
               proto.attr("ParseFromString")(py::bytes(ExportGraph(*g).SerializeAsString()));
               graphs.append(proto);
             }
             if (a->type() == onnx::AttributeProto::GRAPH && graphs.size() == 1) return graphs[0];
             return std::move(graphs);
           })
      .def_property_readonly("subgraphs", &Node::subgraphs, py::return_value_policy::reference)
      .def("__repr__", [](const Node& n) {
        auto names = [](const std::vector<Value*>& vs) {
          std::string out;
          for (size_t i = 0; i < vs.size(); ++i) out += (i ? ", " : "") + (vs[i] ? vs[i]->name() : std::string());
          return out;
        };
        return "<Node '" + n.name() + "' " + (n.domain().empty() ? "" : n.domain() + "::") + n.op_type() + "(" +
               names(n.inputs()) + ") -> (" + names(n.outputs()) + ")>";
      });
}

// Graph and Model.
void BindGraphsAndModels(py::module_& m) {
  py::class_<Graph>(m, "Graph")
      .def_property_readonly("name", &Graph::name)
      .def_property_readonly(
          "nodes",
          [](const Graph& g) {
            std::vector<Node*> out(g.nodes().begin(), g.nodes().end());
            return out;
          },
          py::return_value_policy::reference_internal)
      .def_property_readonly("inputs", &Graph::inputs, py::return_value_policy::reference_internal)
      .def_property_readonly("outputs", &Graph::outputs, py::return_value_policy::reference_internal)
      .def_property_readonly("initializers", &Graph::initializers, py::return_value_policy::reference_internal)
      .def(
          "value",
          [](const Graph& g, const std::string& name) {
            Value* v = g.LookupValue(name);
            if (!v) throw py::key_error(name);
            return v;
          },
          py::return_value_policy::reference_internal)
      .def("__len__", &Graph::num_nodes)
      .def("__repr__", [](const Graph& g) {
        return "<Graph '" + g.name() + "' with " + std::to_string(g.num_nodes()) + " nodes>";
      });

  py::class_<Model>(m, "Model")
      .def_property_readonly("graph", py::overload_cast<>(&Model::graph), py::return_value_policy::reference_internal)
      .def_property_readonly("ir_version", [](const Model& m) { return m.proto().ir_version(); })
      .def_property_readonly("opset_imports",
                             [](const Model& m) {
                               std::map<std::string, int64_t> out;
                               for (const auto& op : m.proto().opset_import()) out[op.domain()] = op.version();
                               return out;
                             })
      .def("opset_version", &Model::OpsetVersion, py::arg("domain") = "")
      .def("__repr__",
           [](const Model& m) {
             std::string opsets;
             for (const auto& op : m.proto().opset_import())
               opsets += (opsets.empty() ? "" : ", ") +
                         std::string(CanonicalDomain(op.domain()).empty() ? "ai.onnx" : op.domain()) + ":" +
                         std::to_string(op.version());
             return "<Model ir_version=" + std::to_string(m.proto().ir_version()) + " opsets={" + opsets + "} graph '" +
                    m.graph().name() + "' with " + std::to_string(m.graph().num_nodes()) + " nodes>";
           })
      .def_property_readonly("function_names",
                             [](const Model& m) {
                               std::vector<std::string> out;
                               for (const auto& f : m.functions()) out.push_back(f->domain() + "::" + f->name());
                               return out;
                             })
      .def(
          "save",
          [](const Model& m, const std::string& path, const std::string& external_data, size_t size_threshold,
             const std::string& location, bool replace_source) {
            SaveOptions o;
            o.external_data = ParseMode(external_data);
            o.size_threshold = size_threshold;
            o.location = location;
            o.replace_source = replace_source;
            py::gil_scoped_release release;
            auto s = SaveModel(m, path, o);
            py::gil_scoped_acquire acquire;
            Check(s);
          },
          py::arg("path"), py::arg("external_data") = "keep", py::arg("size_threshold") = 1024,
          py::arg("location") = "", py::arg("replace_source") = false)
      .def("to_bytes", [](const Model& m) { return py::bytes(Unwrap(SaveModelToBytes(m))); })
      // The model serialized without the raw_data of its main-graph initializers of at
      // least min_bytes, and those payloads as [(initializer index, bytes)] (Model.to_proto).
      .def(
          "_to_parts",
          [](const Model& m, size_t min_bytes) {
            StatusOr<DetachedModel> detached;
            {
              py::gil_scoped_release release;
              detached = SaveModelDetached(m, min_bytes);
            }
            DetachedModel d = Unwrap(std::move(detached));
            py::list parts;
            for (const DetachedPayload& p : d.parts) {
              // A deferred tensor's source: the TensorProto _load_parts was given for it.
              parts.append(p.deferred ? py::make_tuple(p.index, PythonObjectOf(p.deferred->source))
                                      : py::make_tuple(p.index, PayloadAsBytes(p)));
            }
            return py::make_tuple(OwnedBytes{std::move(d.bytes)}, parts);
          },
          py::arg("min_bytes"))
      .def("to_text", [](const Model& m) { return PrintModelText(m); })
      .def("inspect_json", [](const Model& m) { return FormatInspectJson(Inspect(m)); })
      .def(
          "check", [](const Model& m, bool full) { Check(CheckModel(m, full)); }, py::arg("full") = true)
      .def("infer_shapes", [](Model& m) { return Unwrap(InferShapes(m)); })
      .def(
          "run",
          [](Model& m, const std::string& pipeline, bool verify_each) {
            auto items = Unwrap(ParsePipeline(pipeline));
            PassManagerOptions o;
            o.verify_each = verify_each;
            o.validate = OutputValidation::kFull;  // as the CLI: never hand back what onnx refuses
            return ReportsToList(Unwrap(RunPipeline(m, items, o)));
          },
          py::arg("pipeline"), py::arg("verify_each") = false);
}

// Loading without copies, the pass table and target checks.
void BindLoading(py::module_& m) {
  // Loads from any bytes-like object without copying it: tensors view its buffer and keep
  // the object alive (a bytes object is immutable, so the view stays valid).
  m.def(
      "load_buffer",
      [](py::object data, const std::string& base_dir) {
        py::buffer_info info = py::buffer(data).request();
        if (info.ndim != 1 || info.itemsize != 1) throw py::type_error("expected a 1-D buffer of bytes");
        std::string_view view(static_cast<const char*>(info.ptr), static_cast<size_t>(info.size));
        std::shared_ptr<const void> owner = HoldPythonObject(data);
        LoadOptions o;
        o.base_dir = base_dir;
        StatusOr<std::unique_ptr<Model>> model;
        {
          py::gil_scoped_release release;
          model = LoadModelFromBuffer(std::move(owner), view, o);
        }
        return Unwrap(std::move(model));
      },
      py::arg("data"), py::arg("base_dir") = "");
  // Loads a serialized model whose listed main-graph initializers come apart, as
  // [(initializer index, bytes-like)], each viewed without a copy and kept alive
  // (Model.from_proto: protobuf never serializes the big weights).
  // `deferred`: [(initializer index, onnx.TensorProto)] whose raw_data is read only when a
  // pass needs the bytes (DeferredBytes); the proto must not change while the Model lives.
  m.def(
      "_load_parts",
      [](py::object data, py::list parts, const std::string& base_dir, py::list deferred) {
        auto view_of = [](const py::object& obj) {
          py::buffer_info info = py::buffer(obj).request();
          if (info.ndim != 1 || info.itemsize != 1) throw py::type_error("expected a 1-D buffer of bytes");
          return std::string_view(static_cast<const char*>(info.ptr), static_cast<size_t>(info.size));
        };
        std::string_view view = view_of(data);
        std::vector<DetachedPayload> payloads;
        payloads.reserve(parts.size());
        for (py::handle item : parts) {
          auto pair = item.cast<py::tuple>();
          if (pair.size() != 2) throw py::type_error("expected (index, bytes) pairs");
          py::object obj = pair[1];
          std::string_view bytes = view_of(obj);
          payloads.push_back({pair[0].cast<int>(), HoldPythonObject(obj), bytes});
        }
        for (py::handle item : deferred) {
          auto pair = item.cast<py::tuple>();
          if (pair.size() != 2) throw py::type_error("expected (index, TensorProto) pairs");
          payloads.push_back(
              {pair[0].cast<int>(), nullptr, {}, std::make_shared<const DeferredPayload>(DeferRawData(pair[1]))});
        }
        std::shared_ptr<const void> owner = HoldPythonObject(data);
        LoadOptions o;
        o.base_dir = base_dir;
        StatusOr<std::unique_ptr<Model>> model;
        {
          py::gil_scoped_release release;
          model = LoadModelFromParts(std::move(owner), view, std::move(payloads), o);
        }
        return Unwrap(std::move(model));
      },
      py::arg("data"), py::arg("parts"), py::arg("base_dir") = "", py::arg("deferred") = py::list());
  m.def("parse_text", [](const std::string& text) { return Unwrap(ParseModelText(text)); });
  m.def("passes", []() {
    py::list out;
    std::vector<const PassInfo*> all;
    for (const PassInfo& p : AllPasses()) all.push_back(&p);
    for (const PassInfo* p : RegisteredPasses()) all.push_back(p);
    for (size_t i = 0; i < all.size(); ++i) {
      const PassInfo& p = *all[i];
      py::dict d;
      d["name"] = p.name;
      d["builtin"] = i < AllPasses().size();  // else registered from Python
      d["summary"] = p.summary;
      py::list opts;
      for (const auto& o : p.options) {
        opts.append(py::dict(py::arg("name") = o.name, py::arg("type") = std::string(OptionTypeName(o.type)),
                             py::arg("help") = o.help, py::arg("default") = o.default_value,
                             py::arg("choices") = o.choices));
      }
      d["options"] = opts;
      out.append(d);
    }
    return out;
  });
  // check --target --json, as text (onnxsurgeon.check_target parses it). input_shapes as
  // in --input-shapes: the inputs it names count as made static by --target.
  m.def("check_target", [](const Model& model, const std::string& target, const std::string& input_shapes,
                           const std::string& model_name) {
    target::CompiledProfile profile = Unwrap(target::LoadTarget(target));
    target::CheckOptions options = target::CheckOptionsFor(input_shapes);
    return target::CheckReportJson(target::CheckTarget(model, profile, options), profile.profile, model_name);
  });
  m.def("check_pipeline", [](const std::string& pipeline) { Unwrap(ParsePipeline(pipeline)); });
}

// Compare and bisect (core/verify).
void BindVerify(py::module_& m) {
  // compare and bisect (core/verify): options as the CLI's flags, results as the CLI's
  // --json text (onnxsurgeon.compare / onnxsurgeon.bisect parse it). The models are copied
  // (sharing weights) first: comparing sorts graphs, and the caller's stay as they are.
  m.def(
      "_compare",
      [](const Model& a, const Model* b, const std::string& inputs, const std::string& reference,
         const std::string& backend, const std::map<std::string, std::vector<int64_t>>& input_shapes, uint64_t seed,
         int64_t batch, bool outputs_only, bool fp16_tolerance, const std::string& a_label,
         const std::string& b_label) {
        CompareOptions options;
        options.inputs_file = inputs;
        options.reference_file = reference;
        options.backend = backend;
        options.input_shapes = input_shapes;
        options.seed = seed;
        options.batch = batch;
        options.outputs_only = outputs_only;
        options.fp16_tolerance = fp16_tolerance;
        std::unique_ptr<Model> a_copy = Unwrap(CopySharingWeights(a));
        std::unique_ptr<Model> b_copy = b ? Unwrap(CopySharingWeights(*b)) : nullptr;
        CompareResult r = Unwrap(CompareModels(*a_copy, b_copy.get(), options));
        r.a_label = a_label;
        r.b_label = b_label;
        return DumpJson(CompareToJson(r));
      },
      py::arg("a"), py::arg("b").none(true), py::arg("inputs"), py::arg("reference"), py::arg("backend"),
      py::arg("input_shapes"), py::arg("seed"), py::arg("batch"), py::arg("outputs_only"), py::arg("fp16_tolerance"),
      py::arg("a_label"), py::arg("b_label"));
  m.def(
      "_bisect",
      [](const Model& model, const std::string& pipeline, const std::string& inputs,
         const std::map<std::string, std::vector<int64_t>>& input_shapes, uint64_t seed, bool widen) {
        BisectOptions options;
        options.compare.inputs_file = inputs;
        options.compare.input_shapes = input_shapes;
        options.compare.seed = seed;
        options.widen = widen;
        auto items = Unwrap(ParsePipeline(pipeline));
        BisectResult r = Unwrap(Bisect(model, items, options));
        return py::make_tuple(DumpJson(BisectToJson(r)), std::move(r.reproducer));
      },
      py::arg("model"), py::arg("pipeline"), py::arg("inputs"), py::arg("input_shapes"), py::arg("seed"),
      py::arg("widen"));
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "onnxsurgeon C++ core (use the onnxsurgeon package, not this module)";
  static py::exception<std::runtime_error> error(m, "OnnxSurgeonError", PyExc_ValueError);
  ErrorType() = error.ptr();
  m.attr("__version__") = ONNXSURGEON_VERSION;
  passes::InstallBuiltinPasses();

  py::class_<OwnedBytes>(m, "_Buffer", py::buffer_protocol())
      .def_buffer([](OwnedBytes& b) {
        return py::buffer_info(b.bytes.data(), 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(b.bytes.size())}, {1}, /*readonly=*/true);
      })
      .def("__len__", [](const OwnedBytes& b) { return b.bytes.size(); });

  BindValuesAndNodes(m);
  BindGraphsAndModels(m);
  BindRules(m);
  BindLoading(m);
  BindVerify(m);
}
