#include "core/verify/segments.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/interop/onnx_interop.h"
#include "core/io/model_io.h"
#include "core/pass/pass.h"

namespace onnxsurgeon {
namespace {

// A segment's inputs and outputs need an element type and a rank (extract's rule).
bool IoTyped(const Value* v) {
  const onnx::TypeProto* t = v->type();
  if (!t) return false;
  return !t->has_tensor_type() || (t->tensor_type().elem_type() != 0 && t->tensor_type().has_shape());
}

// The main-graph node a (possibly nested) node belongs to.
const Node* TopLevel(const Node* n) {
  while (n->graph()->kind() == GraphKind::kSubgraph && n->graph()->parent_node()) n = n->graph()->parent_node();
  return n;
}

// Main-graph values a node reads: its inputs, and the outer values its subgraphs read.
std::vector<Value*> Reads(const Node& n, const Graph& main) {
  std::vector<Value*> reads;
  for (Value* v : n.inputs())
    if (v) reads.push_back(v);
  for (Graph* sub : n.subgraphs()) {
    for (Node* inner : sub->AllNodesRecursive())
      for (Value* v : inner->inputs())
        if (v && v->graph() == &main) reads.push_back(v);
    for (Value* v : sub->outputs())
      if (v->graph() == &main) reads.push_back(v);
  }
  return reads;
}

// Types onnx shape inference gives the main graph's untyped node outputs (weights reach it
// as type and dims only). A model inference fails on keeps what it has.
void FillMissingTypes(Model& model) {
  std::vector<Value*> untyped;
  for (Node* n : model.graph().nodes())
    for (Value* v : n->outputs())
      if (v && !IoTyped(v)) untyped.push_back(v);
  if (untyped.empty()) return;
  InferShapesOptions options;
  options.max_payload_bytes = 4096;
  options.record_value_info = false;
  auto inferred = InferredCopy(model, options);
  if (!inferred.ok()) return;
  absl::flat_hash_map<const Value*, const onnx::TypeProto*> found;
  inferred->ForEachType([&](Value* v, const onnx::TypeProto& t) { found[v] = &t; });
  for (Value* v : untyped) {
    auto it = found.find(v);
    if (it != found.end()) *v->mutable_info()->mutable_type() = *it->second;
  }
}

// The model of segments [i, j) of `source`: `extract` of every value they read from before
// them, computing every value any of them outputs.
StatusOr<std::unique_ptr<Model>> CutRange(const Model& source, const std::vector<Segment>& segments,
                                          const std::vector<int64_t>& starts,
                                          const absl::flat_hash_map<std::string, int64_t>& defined_at, size_t i,
                                          size_t j) {
  std::vector<std::string> inputs, outputs;
  absl::flat_hash_set<std::string> seen_in, seen_out;
  for (size_t k = i; k < j; ++k) {
    for (const std::string& name : segments[k].inputs) {
      auto it = defined_at.find(name);
      bool before = it == defined_at.end() || it->second < starts[i];  // a graph input, or earlier
      if (before && seen_in.insert(name).second) inputs.push_back(name);
    }
    for (const std::string& name : segments[k].outputs)
      if (seen_out.insert(name).second) outputs.push_back(name);
  }
  const PassInfo* extract = FindPass("extract");
  if (!extract) return absl::InternalError("compare: the extract pass is not registered");
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> copy, CopySharingWeights(source));
  PassOptions cut(extract->options, {{"inputs", absl::StrJoin(inputs, ";")}, {"outputs", absl::StrJoin(outputs, ";")}});
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, CreatePass(*extract, cut));
  auto cut_result = pass->Run(*copy, PassContext{});
  if (!cut_result.ok()) {
    return Status(cut_result.status().code(), absl::StrCat("compare: cannot cut segments ", i, "..", j - 1,
                                                           " out of the model: ", cut_result.status().message()));
  }
  return copy;
}

// Saves segments [i, j), each cut from a model of a range around it, halving ranges: each
// node is copied about log2(segments) times, not once per segment. `whole`: `source` is the
// whole model (cut only at the leaves).
Status SaveRange(const Model& source, const std::vector<Segment>& segments, const std::vector<int64_t>& starts,
                 const absl::flat_hash_map<std::string, int64_t>& defined_at, size_t i, size_t j, bool whole) {
  if (j - i == 1) {
    OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> leaf, CutRange(source, segments, starts, defined_at, i, j));
    SaveOptions save;
    save.external_data = ExternalDataMode::kAll;
    save.location = std::filesystem::path(segments[i].path).filename().string() + ".data";
    return SaveModel(*leaf, segments[i].path, save);
  }
  std::unique_ptr<Model> range;
  if (!whole) {
    OS_ASSIGN_OR_RETURN(range, CutRange(source, segments, starts, defined_at, i, j));
  }
  const Model& from = whole ? source : *range;
  const size_t mid = i + (j - i) / 2;
  OS_RETURN_IF_ERROR(SaveRange(from, segments, starts, defined_at, i, mid, false));
  return SaveRange(from, segments, starts, defined_at, mid, j, false);
}
}  // namespace

StatusOr<std::unique_ptr<Model>> CopySharingWeights(const Model& model) {
  OS_ASSIGN_OR_RETURN(DetachedModel detached, SaveModelDetached(model, 1024));
  auto bytes = std::make_shared<std::string>(std::move(detached.bytes));
  std::string_view view = *bytes;
  return LoadModelFromParts(bytes, view, std::move(detached.parts));
}

std::vector<InputSpec> InputSpecs(const Model& model) {
  std::vector<InputSpec> specs;
  for (Value* v : model.graph().inputs()) {
    if (v->IsInitializer()) continue;
    InputSpec s;
    s.name = v->name();
    if (const onnx::TypeProto* t = v->type(); t && t->has_tensor_type()) {
      s.elem_type = t->tensor_type().elem_type();
      for (const auto& d : t->tensor_type().shape().dim()) {
        s.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
        s.symbols.push_back(d.has_dim_param() ? d.dim_param() : "");
      }
    }
    specs.push_back(std::move(s));
  }
  return specs;
}

StatusOr<std::vector<Segment>> WriteSegments(Model& model, const std::vector<std::string>& exposed_names,
                                             const SegmentOptions& options, const std::string& dir,
                                             const std::string& prefix) {
  Graph& g = model.graph();
  if (!g.IsTopologicallySorted()) OS_RETURN_IF_ERROR(g.TopologicalSort());
  FillMissingTypes(model);
  const std::vector<Node*> nodes(g.nodes().begin(), g.nodes().end());
  const int64_t n = static_cast<int64_t>(nodes.size());
  absl::flat_hash_map<const Node*, int64_t> pos;
  for (int64_t i = 0; i < n; ++i) pos[nodes[i]] = i;
  // Where each main-graph node output is read last (n: a graph output, read by the caller).
  absl::flat_hash_map<const Value*, int64_t> last_use;
  for (Node* node : nodes) {
    for (Value* v : node->outputs()) {
      if (!v) continue;
      int64_t last = v->IsGraphOutput() ? n : -1;
      for (const Use& u : v->uses()) last = std::max(last, pos[TopLevel(u.node)]);
      last_use[v] = last;
    }
  }
  // Subgraph outputs that return an outer value directly are reads too.
  for (Node* node : nodes)
    for (Value* r : Reads(*node, g))
      if (auto it = last_use.find(r); it != last_use.end()) it->second = std::max(it->second, pos[node]);
  absl::flat_hash_set<const Value*> exposed;
  for (const std::string& name : exposed_names) {
    Value* v = g.FindValue(name);
    if (v && v->producer() && v->producer()->graph() == &g && IoTyped(v)) exposed.insert(v);
  }

  // Cuts: after `batch` exposed tensors, where every live value is typed.
  std::vector<int64_t> cuts = {0};
  std::vector<const Value*> live;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (Value* v : nodes[i]->outputs()) {
      if (!v) continue;
      if (last_use[v] > i) live.push_back(v);
      count += exposed.contains(v);
    }
    const int64_t c = i + 1;
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Value* v) { return last_use[v] < c; }), live.end());
    if (c < n && count >= options.batch && std::all_of(live.begin(), live.end(), IoTyped)) {
      cuts.push_back(c);
      count = 0;
    }
  }
  cuts.push_back(n);

  std::vector<Segment> segments;
  std::vector<int64_t> starts;                            // each segment's first node
  absl::flat_hash_map<std::string, size_t> last_segment;  // value -> last segment reading it
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const int64_t s = cuts[k], e = cuts[k + 1];
    Segment seg;
    absl::flat_hash_set<const Value*> seen;
    for (int64_t i = s; i < e; ++i) {
      for (Value* r : Reads(*nodes[i], g)) {
        if (r->IsInitializer() || r->IsSparseInitializer() || !seen.insert(r).second) continue;
        if (r->IsGraphInput() || (r->producer() && pos[r->producer()] < s)) seg.inputs.push_back(r->name());
      }
    }
    for (int64_t i = s; i < e; ++i) {
      for (Value* v : nodes[i]->outputs()) {
        if (!v) continue;
        bool later = last_use[v] >= e, shown = exposed.contains(v);
        if (later || shown) seg.outputs.push_back(v->name());
        if (shown) seg.exposed.push_back(v->name());
      }
    }
    if (seg.outputs.empty()) continue;  // nothing observable (dead nodes)
    for (const std::string& name : seg.inputs) last_segment[name] = segments.size();
    for (const std::string& name : seg.outputs) last_segment.try_emplace(name, segments.size());
    seg.path = dir + "/" + absl::StrFormat("%s_%03d.onnx", prefix, segments.size());
    segments.push_back(std::move(seg));
    starts.push_back(s);
  }
  absl::flat_hash_map<std::string, int64_t> defined_at;  // node outputs -> producer's position
  for (const auto& [v, _] : last_use) defined_at[v->name()] = pos[v->producer()];
  if (!segments.empty()) {
    OS_RETURN_IF_ERROR(SaveRange(model, segments, starts, defined_at, 0, segments.size(), /*whole=*/true));
  }
  // Release a value after the last segment that reads it (graph outputs stay to the end).
  for (const auto& [name, k] : last_segment) {
    Value* v = g.FindValue(name);
    if (v && v->IsGraphOutput()) continue;
    segments[k].release.push_back(name);
  }
  for (Segment& seg : segments) std::sort(seg.release.begin(), seg.release.end());
  return segments;
}

}  // namespace onnxsurgeon
