#include "tests/cpp/canonical.h"

#include <algorithm>
#include <map>
#include <set>

#include "onnx/defs/printer.h"

namespace onnxsurgeon::testing {
namespace {

struct Renamer {
  std::map<std::string, std::string> names;
  int values = 0;
  int constants = 0;

  void Graph(onnx::GraphProto& g, const std::set<std::string>& fixed_outer) {
    std::set<std::string> fixed = fixed_outer;
    for (const auto& vi : g.input()) fixed.insert(vi.name());
    for (const auto& vi : g.output()) fixed.insert(vi.name());
    std::set<std::string> inits;
    for (const auto& t : g.initializer())
      if (!fixed.count(t.name())) inits.insert(t.name());
    for (auto& n : *g.mutable_node()) {
      for (auto& in : *n.mutable_input()) {
        if (inits.count(in) && !names.count(in)) names[in] = "c" + std::to_string(constants++);
        if (names.count(in)) in = names[in];
      }
      for (auto& out : *n.mutable_output()) {
        if (out.empty() || fixed.count(out)) continue;
        if (!names.count(out)) names[out] = "v" + std::to_string(values++);
        out = names[out];
      }
      n.clear_name();
      n.clear_metadata_props();
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) Graph(*a.mutable_g(), fixed);
        for (auto& sg : *a.mutable_graphs()) Graph(sg, fixed);
      }
    }
    for (auto& t : *g.mutable_initializer())
      if (names.count(t.name())) t.set_name(names[t.name()]);
    std::sort(g.mutable_initializer()->begin(), g.mutable_initializer()->end(),
              [](const auto& a, const auto& b) { return a.name() < b.name(); });
    g.clear_value_info();
  }
};

}  // namespace

std::string CanonicalText(onnx::ModelProto model) {
  Renamer r;
  r.Graph(*model.mutable_graph(), {});
  for (auto& f : *model.mutable_functions())
    for (auto& n : *f.mutable_node()) n.clear_name();
  return onnx::ProtoToString(model);
}

}  // namespace onnxsurgeon::testing
