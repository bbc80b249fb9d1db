#include "tests/cpp/subgraph_check.h"

#include <map>
#include <set>
#include <vector>

#include "onnx/defs/printer.h"

namespace onnxsurgeon::testing {
namespace {

std::string Printed(const onnx::ValueInfoProto& vi) { return onnx::ProtoToString(vi); }

// Values and type, not the name or how the bytes are stored (the printer decodes raw_data).
std::string TensorValue(onnx::TensorProto t) {
  t.clear_name();
  return onnx::ProtoToString(t);
}

std::string Attributes(const onnx::NodeProto& n) {
  std::map<std::string, std::string> by_name;
  for (const auto& a : n.attribute()) by_name[a.name()] = onnx::ProtoToString(a);
  std::string out;
  for (const auto& [name, text] : by_name) out += text + ";";
  return out;
}

// Backtracking: expected node i tries every unused result node, binding names as it goes
// and undoing the bindings of a failed try.
class SubgraphMatcher {
 public:
  SubgraphMatcher(const onnx::GraphProto& have, const onnx::GraphProto& want) : have_(have), want_(want) {
    for (const auto& vi : have.input()) fixed_.insert(vi.name());
    for (const auto& vi : have.output()) fixed_.insert(vi.name());
    for (const auto& t : have.initializer()) have_inits_[t.name()] = &t;
    for (const auto& t : want.initializer()) want_inits_[t.name()] = &t;
    used_.assign(have.node_size(), false);
  }

  bool Match(int i) {
    if (i == want_.node_size()) return true;
    const onnx::NodeProto& w = want_.node(i);
    for (int j = 0; j < have_.node_size(); ++j) {
      const onnx::NodeProto& h = have_.node(j);
      if (used_[j] || !SameOp(w, h)) continue;
      std::vector<std::string> added;
      bool ok = true;
      for (int k = 0; ok && k < w.input_size(); ++k) ok = Bind(w.input(k), h.input(k), added);
      for (int k = 0; ok && k < w.output_size(); ++k) ok = Bind(w.output(k), h.output(k), added);
      if (ok) {
        used_[j] = true;
        if (Match(i + 1)) return true;
        used_[j] = false;
      }
      for (const std::string& name : added) {
        bound_.erase(binding_[name]);
        binding_.erase(name);
      }
    }
    deepest_ = std::max(deepest_, i);
    return false;
  }

  int deepest() const { return deepest_; }

 private:
  static bool SameOp(const onnx::NodeProto& w, const onnx::NodeProto& h) {
    return w.domain() == h.domain() && w.op_type() == h.op_type() && w.input_size() == h.input_size() &&
           w.output_size() == h.output_size() && Attributes(w) == Attributes(h);
  }

  bool Bind(const std::string& w, const std::string& h, std::vector<std::string>& added) {
    if (w.empty() || h.empty() || fixed_.count(w) || fixed_.count(h)) return w == h;
    if (auto it = binding_.find(w); it != binding_.end()) return it->second == h;
    if (bound_.count(h)) return false;
    if (auto it = want_inits_.find(w); it != want_inits_.end()) {
      auto have_it = have_inits_.find(h);
      if (have_it == have_inits_.end() || TensorValue(*have_it->second) != TensorValue(*it->second)) return false;
    }
    binding_[w] = h;
    bound_.insert(h);
    added.push_back(w);
    return true;
  }

  const onnx::GraphProto& have_;
  const onnx::GraphProto& want_;
  std::set<std::string> fixed_;
  std::map<std::string, const onnx::TensorProto*> have_inits_, want_inits_;
  std::map<std::string, std::string> binding_;  // expected name -> result name
  std::set<std::string> bound_;                 // result names already taken
  std::vector<bool> used_;
  int deepest_ = 0;
};

}  // namespace

std::string ContainsSubgraph(const onnx::ModelProto& have, const onnx::ModelProto& want) {
  if (have.ir_version() != want.ir_version())
    return "ir_version " + std::to_string(have.ir_version()) + ", expected " + std::to_string(want.ir_version());
  std::map<std::string, int64_t> have_opsets, want_opsets;
  for (const auto& o : have.opset_import()) have_opsets[o.domain()] = o.version();
  for (const auto& o : want.opset_import()) want_opsets[o.domain()] = o.version();
  if (have_opsets != want_opsets) return "the opset imports differ";
  const onnx::GraphProto& h = have.graph();
  const onnx::GraphProto& w = want.graph();
  auto signature = [](const auto& list) {
    std::string s;
    for (const auto& vi : list) s += Printed(vi) + ", ";
    return s;
  };
  if (signature(h.input()) != signature(w.input())) return "graph inputs differ: " + signature(h.input());
  if (signature(h.output()) != signature(w.output())) return "graph outputs differ: " + signature(h.output());
  SubgraphMatcher matcher(h, w);
  if (matcher.Match(0)) return "";
  return "no result node matches expected node " + std::to_string(matcher.deepest()) + " (" +
         onnx::ProtoToString(w.node(matcher.deepest())) + ") together with the nodes before it";
}

}  // namespace onnxsurgeon::testing
