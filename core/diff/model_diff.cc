#include "core/diff/model_diff.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/inspect/inspect.h"
#include "core/inspect/model_stats.h"
#include "core/ir/domains.h"
#include "core/ir/dtypes.h"

namespace onnxsurgeon {
namespace {

std::string OpKey(const Node& n) { return QualifiedOpName(n.domain(), n.op_type()); }

std::string ValueName(const Value* v) { return v ? v->name() : ""; }

std::string Names(const std::vector<Value*>& values) {
  std::vector<std::string> names;
  for (const Value* v : values) names.push_back(ValueName(v));
  return absl::StrJoin(names, ",");
}

// Adds name -> before/after changes for two name -> text maps.
void DiffMaps(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b,
              std::vector<ModelDiff::Change>& out) {
  for (const auto& [name, text] : a) {
    auto it = b.find(name);
    if (it == b.end()) out.push_back({name, text, ""});
    else if (it->second != text) out.push_back({name, text, it->second});
  }
  for (const auto& [name, text] : b)
    if (!a.count(name)) out.push_back({name, "", text});
}

std::map<std::string, std::string> Interface(const std::vector<Value*>& values) {
  std::map<std::string, std::string> out;
  for (const Value* v : values)
    if (!v->IsInitializer()) out[v->name()] = TypeToString(v->type());
  return out;
}

std::string TensorText(const Tensor& t) {
  std::vector<std::string> dims;
  for (int64_t d : t.meta().dims()) dims.push_back(absl::StrCat(d));
  return absl::StrCat(DataTypeNameLower(t.meta().data_type()), "[", absl::StrJoin(dims, ","), "]");
}

std::string TensorBytes(const Tensor& t) {
  if (t.has_raw_bytes()) return std::string(t.raw_bytes());
  auto copy = t.RawBytesCopy();
  return copy.ok() ? *copy : t.meta().SerializeAsString();
}

std::string AttributeBytes(const Attribute& a) { return a.proto().SerializeAsString(); }

std::map<std::string, std::string> ValueTypes(const Graph& g) {
  std::map<std::string, std::string> out;
  auto add = [&](const Value* v) {
    if (v && v->type()) out[v->name()] = TypeToString(v->type());
  };
  for (const Value* v : g.inputs()) add(v);
  for (const Node* n : g.nodes())
    for (const Value* v : n->outputs()) add(v);
  return out;
}

}  // namespace

std::vector<std::string> NodeDifferences(const Node& a, const Node& b) {
  std::vector<std::string> what;
  if (OpKey(a) != OpKey(b)) what.push_back("op");
  if (Names(a.inputs()) != Names(b.inputs())) what.push_back("inputs");
  if (Names(a.outputs()) != Names(b.outputs())) what.push_back("outputs");
  std::map<std::string, std::string> attrs_a, attrs_b;
  for (const Attribute& x : a.attributes()) attrs_a[x.name()] = AttributeBytes(x);
  for (const Attribute& x : b.attributes()) attrs_b[x.name()] = AttributeBytes(x);
  std::set<std::string> names;
  for (const auto& [k, v] : attrs_a) names.insert(k);
  for (const auto& [k, v] : attrs_b) names.insert(k);
  for (const std::string& k : names) {
    auto ia = attrs_a.find(k), ib = attrs_b.find(k);
    if (ia == attrs_a.end() || ib == attrs_b.end() || ia->second != ib->second) what.push_back("attribute " + k);
  }
  return what;
}

NodeMatching MatchNodes(const Graph& a, const Graph& b) {
  NodeMatching m;
  std::vector<Node*> na(a.nodes().begin(), a.nodes().end()), nb(b.nodes().begin(), b.nodes().end());
  std::vector<bool> used_a(na.size()), used_b(nb.size());
  auto match = [&](size_t i, size_t j) {
    used_a[i] = used_b[j] = true;
    m.matched.emplace_back(na[i], nb[j]);
  };
  std::map<std::string, std::vector<size_t>> names_a, names_b;
  for (size_t i = 0; i < na.size(); ++i)
    if (!na[i]->name().empty()) names_a[na[i]->name()].push_back(i);
  for (size_t j = 0; j < nb.size(); ++j)
    if (!nb[j]->name().empty()) names_b[nb[j]->name()].push_back(j);
  for (const auto& [name, ia] : names_a) {
    auto it = names_b.find(name);
    if (ia.size() == 1 && it != names_b.end() && it->second.size() == 1) {
      match(ia[0], it->second[0]);
      ++m.by_name;
    }
  }
  auto structural = [&](auto key) {
    std::map<std::string, std::vector<size_t>> ka, kb;
    for (size_t i = 0; i < na.size(); ++i)
      if (!used_a[i]) ka[key(*na[i])].push_back(i);
    for (size_t j = 0; j < nb.size(); ++j)
      if (!used_b[j]) kb[key(*nb[j])].push_back(j);
    for (auto& [k, ia] : ka) {
      auto it = kb.find(k);
      if (it == kb.end()) continue;
      for (size_t n = 0; n < std::min(ia.size(), it->second.size()); ++n) {
        match(ia[n], it->second[n]);
        ++m.by_structure;
      }
    }
  };
  structural([](const Node& n) { return absl::StrCat(OpKey(n), "|", Names(n.outputs())); });
  structural([](const Node& n) { return absl::StrCat(OpKey(n), "|", Names(n.inputs())); });
  // A rewrite that renames its node and weights (fuse-conv-bn) keeps the data input, or
  // the output the rest of the graph reads.
  structural([](const Node& n) { return absl::StrCat(OpKey(n), "|in0|", ValueName(n.input(0))); });
  structural([](const Node& n) { return absl::StrCat(OpKey(n), "|out0|", ValueName(n.output(0))); });
  for (size_t i = 0; i < na.size(); ++i)
    if (!used_a[i]) m.removed.push_back(na[i]);
  for (size_t j = 0; j < nb.size(); ++j)
    if (!used_b[j]) m.added.push_back(nb[j]);
  return m;
}

bool ModelDiff::Empty() const {
  return ir_before == ir_after && opsets.empty() && inputs.empty() && outputs.empty() && op_counts.empty() &&
         initializers.empty() && value_types.empty() && nodes_changed.empty() && nodes_added.empty() &&
         nodes_removed.empty();
}

ModelDiff DiffModels(const Model& before, const Model& after) {
  ModelDiff d;
  d.ir_before = before.proto().ir_version();
  d.ir_after = after.proto().ir_version();
  auto opsets = [](const Model& m) {
    std::map<std::string, std::string> out;
    for (const auto& op : m.proto().opset_import())
      out[op.domain().empty() ? "ai.onnx" : op.domain()] = absl::StrCat(op.version());
    return out;
  };
  DiffMaps(opsets(before), opsets(after), d.opsets);
  DiffMaps(Interface(before.graph().inputs()), Interface(after.graph().inputs()), d.inputs);
  std::map<std::string, std::string> outs_a, outs_b;
  for (const Value* v : before.graph().outputs()) outs_a[v->name()] = TypeToString(v->type());
  for (const Value* v : after.graph().outputs()) outs_b[v->name()] = TypeToString(v->type());
  DiffMaps(outs_a, outs_b, d.outputs);

  InspectReport ra = Inspect(before), rb = Inspect(after);
  d.nodes_before = ra.total_node_count;
  d.nodes_after = rb.total_node_count;
  std::set<std::string> ops;
  for (const auto& [op, n] : ra.op_histogram) ops.insert(op);
  for (const auto& [op, n] : rb.op_histogram) ops.insert(op);
  for (const std::string& op : ops) {
    int64_t a = ra.op_histogram.count(op) ? ra.op_histogram.at(op) : 0;
    int64_t b = rb.op_histogram.count(op) ? rb.op_histogram.at(op) : 0;
    if (a != b) d.op_counts[op] = {a, b};
  }

  std::map<std::string, const Tensor*> inits_a, inits_b;
  for (const Value* v : before.graph().initializers()) inits_a[v->name()] = v->initializer();
  for (const Value* v : after.graph().initializers()) inits_b[v->name()] = v->initializer();
  for (const auto& [name, t] : inits_a) {
    auto it = inits_b.find(name);
    std::string text = absl::StrCat(TensorText(*t), " ", HumanBytes(t->raw_size()));
    if (it == inits_b.end()) {
      d.initializers.push_back({name, text, ""});
      continue;
    }
    std::string other = absl::StrCat(TensorText(*it->second), " ", HumanBytes(it->second->raw_size()));
    if (other != text) d.initializers.push_back({name, text, other});
    else if (TensorBytes(*t) != TensorBytes(*it->second))
      d.initializers.push_back({name, text, other + " (data changed)"});
  }
  for (const auto& [name, t] : inits_b) {
    if (!inits_a.count(name))
      d.initializers.push_back({name, "", absl::StrCat(TensorText(*t), " ", HumanBytes(t->raw_size()))});
  }

  auto types_a = ValueTypes(before.graph()), types_b = ValueTypes(after.graph());
  for (const auto& [name, type] : types_a) {
    auto it = types_b.find(name);
    if (it != types_b.end() && it->second != type) d.value_types.push_back({name, type, it->second});
  }
  NodeMatching m = MatchNodes(before.graph(), after.graph());
  d.nodes_matched_by_name = m.by_name;
  d.nodes_matched_by_structure = m.by_structure;
  for (const auto& [a, b] : m.matched) {
    std::vector<std::string> what = NodeDifferences(*a, *b);
    if (!what.empty()) d.nodes_changed.push_back({a->name(), b->name(), OpKey(*a), OpKey(*b), std::move(what)});
  }
  for (Node* n : m.removed) d.nodes_removed.push_back({n->name(), OpKey(*n)});
  for (Node* n : m.added) d.nodes_added.push_back({n->name(), OpKey(*n)});
  return d;
}

namespace {

std::string Side(const std::string& s) { return s.empty() ? "(none)" : s; }

void Section(std::string& out, const std::string& title, const std::vector<ModelDiff::Change>& changes,
             size_t max_rows) {
  if (changes.empty()) return;
  absl::StrAppend(&out, title, " (", changes.size(), "):\n");
  for (size_t i = 0; i < changes.size() && i < max_rows; ++i) {
    const auto& c = changes[i];
    const char* mark = c.before.empty() ? "+" : c.after.empty() ? "-" : "~";
    absl::StrAppend(&out, "  ", mark, " ", c.name, ": ",
                    c.before.empty()  ? c.after
                    : c.after.empty() ? c.before
                                      : Side(c.before) + " -> " + Side(c.after),
                    "\n");
  }
  if (changes.size() > max_rows) absl::StrAppend(&out, "  ... ", changes.size() - max_rows, " more\n");
}

std::string NodeLabel(const std::string& name, const std::string& op) {
  return name.empty() ? absl::StrCat("(unnamed ", op, ")") : absl::StrCat(name, " (", op, ")");
}

}  // namespace

std::string FormatDiffText(const ModelDiff& d, const std::string& name_before, const std::string& name_after,
                           size_t max_rows) {
  std::string out = absl::StrCat("--- ", name_before, "\n+++ ", name_after, "\n");
  if (d.Empty()) return out + "no differences in opsets, interface, ops, initializers, value types or nodes\n";
  if (d.ir_before != d.ir_after) absl::StrAppend(&out, "ir_version: ", d.ir_before, " -> ", d.ir_after, "\n");
  Section(out, "opsets", d.opsets, max_rows);
  Section(out, "inputs", d.inputs, max_rows);
  Section(out, "outputs", d.outputs, max_rows);
  absl::StrAppend(&out, "nodes: ", d.nodes_before, " -> ", d.nodes_after, " (matched ", d.nodes_matched_by_name,
                  " by name, ", d.nodes_matched_by_structure, " by structure; ", d.nodes_removed.size(), " removed, ",
                  d.nodes_added.size(), " added, ", d.nodes_changed.size(), " changed)\n");
  if (!d.op_counts.empty()) {
    absl::StrAppend(&out, "op counts:\n");
    for (const auto& [op, ab] : d.op_counts) absl::StrAppend(&out, "  ", op, ": ", ab.first, " -> ", ab.second, "\n");
  }
  Section(out, "initializers", d.initializers, max_rows);
  Section(out, "value types", d.value_types, max_rows);
  auto nodes = [&](const char* title, const char* mark, const std::vector<ModelDiff::NodeRef>& list) {
    if (list.empty()) return;
    absl::StrAppend(&out, title, " (", list.size(), "):\n");
    for (size_t i = 0; i < list.size() && i < max_rows; ++i)
      absl::StrAppend(&out, "  ", mark, " ", NodeLabel(list[i].name, list[i].op), "\n");
    if (list.size() > max_rows) absl::StrAppend(&out, "  ... ", list.size() - max_rows, " more\n");
  };
  nodes("nodes removed", "-", d.nodes_removed);
  nodes("nodes added", "+", d.nodes_added);
  if (!d.nodes_changed.empty()) {
    absl::StrAppend(&out, "nodes changed (", d.nodes_changed.size(), "):\n");
    for (size_t i = 0; i < d.nodes_changed.size() && i < max_rows; ++i) {
      const auto& c = d.nodes_changed[i];
      std::string label = NodeLabel(c.name_before, c.op_before);
      if (c.name_after != c.name_before || c.op_after != c.op_before)
        label += " -> " + NodeLabel(c.name_after, c.op_after);
      absl::StrAppend(&out, "  ~ ", label, ": ", absl::StrJoin(c.what, ", "), "\n");
    }
    if (d.nodes_changed.size() > max_rows)
      absl::StrAppend(&out, "  ... ", d.nodes_changed.size() - max_rows, " more\n");
  }
  return out;
}

Json DiffToJson(const ModelDiff& d) {
  auto changes = [](const std::vector<ModelDiff::Change>& list) {
    Json out = Json::array();
    for (const auto& c : list) {
      Json j;
      j["name"] = c.name;
      j["before"] = c.before.empty() ? Json(nullptr) : Json(c.before);
      j["after"] = c.after.empty() ? Json(nullptr) : Json(c.after);
      out.push_back(std::move(j));
    }
    return out;
  };
  auto refs = [](const std::vector<ModelDiff::NodeRef>& list) {
    Json out = Json::array();
    for (const auto& r : list) out.push_back({{"name", r.name}, {"op", r.op}});
    return out;
  };
  Json j;
  j["identical"] = d.Empty();
  j["ir_version"] = {{"before", d.ir_before}, {"after", d.ir_after}};
  j["opsets"] = changes(d.opsets);
  j["inputs"] = changes(d.inputs);
  j["outputs"] = changes(d.outputs);
  j["nodes"] = {{"before", d.nodes_before},
                {"after", d.nodes_after},
                {"matched_by_name", d.nodes_matched_by_name},
                {"matched_by_structure", d.nodes_matched_by_structure}};
  Json ops = Json::object();
  for (const auto& [op, ab] : d.op_counts) ops[op] = {{"before", ab.first}, {"after", ab.second}};
  j["op_counts"] = ops;
  j["initializers"] = changes(d.initializers);
  j["value_types"] = changes(d.value_types);
  j["nodes_removed"] = refs(d.nodes_removed);
  j["nodes_added"] = refs(d.nodes_added);
  Json changed = Json::array();
  for (const auto& c : d.nodes_changed) {
    changed.push_back({{"before", {{"name", c.name_before}, {"op", c.op_before}}},
                       {"after", {{"name", c.name_after}, {"op", c.op_after}}},
                       {"what", c.what}});
  }
  j["nodes_changed"] = changed;
  return j;
}

}  // namespace onnxsurgeon
