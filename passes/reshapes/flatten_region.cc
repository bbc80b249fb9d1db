#include "passes/reshapes/flatten_region.h"

#include <algorithm>
#include <deque>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/shape/propagate.h"
#include "passes/reshapes/reshape_facts.h"

namespace onnxsurgeon::passes::reshapes {
namespace {

struct Entry {
  Value* value;
  Value* source;  // what the 2-D value is made from
  bool bypass;    // source is already [M,c]
  int64_t c;
};
struct Exit {
  Value* value;
  std::vector<Node*> reshapes;  // its readers, when all are Reshapes with a static target
  std::vector<std::vector<int64_t>> targets;
  int64_t c;
};
// The plan: a region, its entries and exits, and what running it on 2-D values costs.
struct Region {
  std::vector<int64_t> leading;
  int64_t m = 1;
  std::vector<Node*> nodes;
  absl::flat_hash_set<Node*> in;
  absl::flat_hash_map<Node*, int64_t> c_out;
  std::vector<Entry> entries;
  std::vector<Exit> exits;
  int64_t entry_cost = 0, exit_cost = 0, gemms = 0, delta = 0;
};

// Nodes whose region flatten-region refused in this run: a fact, so the rule stays
// stateless and a region is judged once, not once per node in it.
struct RefusedRegions {
  absl::flat_hash_set<const Node*> nodes;
};

class FlattenRegionRule : public NodeRule<Region> {
 public:
  explicit FlattenRegionRule(std::string root_op) : NodeRule("flatten-region", std::move(root_op), "", 1) {}

 protected:
  Verdict<Region> Check(Node* root, RewriteFacts& facts) const override {
    absl::flat_hash_set<const Node*>& refused = facts.Get<RefusedRegions>().nodes;
    if (refused.contains(root)) return Refuse("its region was refused already in this run");
    std::vector<std::pair<Node*, std::vector<int64_t>>> seeds;  // node, leading dims L
    auto leading = [](const Value* v) -> std::optional<std::vector<int64_t>> {
      auto s = StaticOf(v);
      if (!s || s->size() < 3) return std::nullopt;
      for (int64_t d : *s)
        if (d <= 0) return std::nullopt;
      s->pop_back();
      return s;
    };
    if (IsOp(root, "MatMul")) {
      if (auto l = leading(root->input(0))) seeds.emplace_back(root, *l);
    } else {  // a Reshape: the region around its input, and the region around its output
      if (auto l = leading(root->input(0)); l && root->input(0)->producer())
        seeds.emplace_back(root->input(0)->producer(), *l);
      if (auto l = leading(root->output(0)))
        for (const Use& u : root->output(0)->uses()) seeds.emplace_back(u.node, *l);
    }
    std::string reason = "no input or output shaped [d0,...,dk,c] with static dims and rank >= 3";
    if (!seeds.empty()) reason = "neither its producer nor its readers can run on a 2-D view";
    for (auto& [seed, l] : seeds) {
      if (!Eligible(seed, l, root->graph(), nullptr)) {
        if (seed == root) reason = absl::StrCat("'", root->name(), "' cannot run on a 2-D view");
        continue;
      }
      Region region;
      region.leading = l;
      Grow(seed, region);
      Trim(region);
      if (region.nodes.empty()) {
        reason =
            "its region is an attention's projections or a normalization's operands, kept N-D for "
            "onnxruntime's fusions";
        continue;
      }
      Plan(region);
      if (region.delta < 0) return region;
      reason = absl::StrCat("running the region of ", region.nodes.size(),
                            " nodes on 2-D values would change the node count by ", region.delta, " (entries ",
                            region.entry_cost, ", exits ", region.exit_cost, ", Gemms ", -region.gemms, ")");
      for (Node* n : region.nodes)
        if (n->op_type() == "MatMul") refused.insert(n);
      for (const auto& e : region.entries)
        if (Node* p = e.value->producer(); IsOp(p, "Reshape")) refused.insert(p);
      for (const auto& x : region.exits)
        for (Node* r : x.reshapes) refused.insert(r);
    }
    return Refuse(reason);
  }

  Status Replace(Node*, Region region, Rewriter& rw) const override { return Rewrite(region, rw); }

 private:
  static std::optional<int64_t> LastDimIfRegionShaped(const Value* v, const std::vector<int64_t>& l) {
    auto s = StaticOf(v);
    if (!s || s->size() != l.size() + 1 || !std::equal(l.begin(), l.end(), s->begin())) return std::nullopt;
    return s->back();
  }

  // True when `n` computes the same on [M,c] views of its region-shaped inputs; `data` gets
  // the indices of those inputs (the ones that change shape).
  static bool Eligible(const Node* n, const std::vector<int64_t>& l, const Graph* g, std::vector<int>* data,
                       int64_t* c_out = nullptr) {
    if (!n || n->graph() != g || !CanonicalDomain(n->domain()).empty() || n->num_outputs() != 1 || !n->output(0) ||
        !n->subgraphs().empty())
      return false;
    std::vector<int> d;
    int64_t c = -1;
    const std::string& op = n->op_type();
    if (IsUnary(op)) {
      if (n->num_inputs() != 1) return false;
      auto ci = LastDimIfRegionShaped(n->input(0), l);
      if (!ci) return false;
      d = {0};
      c = *ci;
    } else if (op == "MatMul") {
      if (n->num_inputs() != 2) return false;
      auto k = LastDimIfRegionShaped(n->input(0), l);
      auto b = StaticOf(n->input(1));
      if (!k || !b || b->size() != 2 || (*b)[0] != *k) return false;
      d = {0};
      c = (*b)[1];
    } else if (IsBinary(op)) {
      if (n->num_inputs() != 2 || !n->input(0) || !n->input(1)) return false;
      std::optional<int64_t> cs[2] = {LastDimIfRegionShaped(n->input(0), l), LastDimIfRegionShaped(n->input(1), l)};
      if (!cs[0] && !cs[1]) return false;
      if (cs[0] && cs[1] && *cs[0] != *cs[1]) return false;
      c = cs[0] ? *cs[0] : *cs[1];
      for (int i = 0; i < 2; ++i) {
        if (cs[i]) {
          d.push_back(i);
          continue;
        }
        // The co-operand must broadcast the same against [..., c] and [M, c].
        auto s = ShapeOfValue(n->input(i));
        if (!s || s->size() > 1) return false;
        if (s->size() == 1 && !((*s)[0].is_static() && ((*s)[0].value == 1 || (*s)[0].value == c))) return false;
      }
    } else {
      return false;
    }
    // An annotation that disagrees with the derived output shape: leave the node alone.
    if (auto out = ShapeOf(n->output(0))) {
      std::vector<int64_t> expected = l;
      expected.push_back(c);
      if (!SameShape(*out, StaticShape(expected))) return false;
    }
    if (data) *data = std::move(d);
    if (c_out) *c_out = c;
    return true;
  }

  static bool IsDataInput(const Node* n, int index, const std::vector<int64_t>& l) {
    std::vector<int> d;
    if (!Eligible(n, l, n->graph(), &d)) return false;
    return std::find(d.begin(), d.end(), index) != d.end();
  }

  static void Grow(Node* seed, Region& r) {
    constexpr size_t kMaxRegion = 100000;
    std::deque<Node*> queue = {seed};
    r.in.insert(seed);
    const Graph* g = seed->graph();
    auto visit_users = [&](Value* v) {
      for (const Use& u : v->uses()) {
        if (r.in.contains(u.node) || r.in.size() >= kMaxRegion) continue;
        if (IsDataInput(u.node, u.input_index, r.leading)) {
          r.in.insert(u.node);
          queue.push_back(u.node);
        }
      }
    };
    while (!queue.empty()) {
      Node* n = queue.front();
      queue.pop_front();
      r.nodes.push_back(n);
      std::vector<int> data;
      int64_t c = 0;
      Eligible(n, r.leading, g, &data, &c);
      r.c_out[n] = c;
      for (int i : data) {
        Value* v = n->input(i);
        Node* p = v->producer();
        if (p && !r.in.contains(p) && r.in.size() < kMaxRegion && Eligible(p, r.leading, g, nullptr)) {
          r.in.insert(p);
          queue.push_back(p);
        }
        visit_users(v);
      }
      visit_users(n->output(0));
    }
  }

  // What a region leaves on N-D values, so the forms onnxruntime's transformer fusions match
  // stay whole:
  //  - a node read by a normalization's statistics (LayerNormalization, or any reduction):
  //    the residual Add before a LayerNorm stays rank 3, which SkipLayerNormalization needs;
  //  - an elementwise head, a node none of whose data operands the region computes nor a
  //    Reshape makes: it saves nothing on a 2-D view (its entry Reshape moves to its output,
  //    one for one or better), and taking it would cut a decomposed LayerNorm's tail
  //    (Div -> Mul(scale) -> Add(bias)) from its head. Repeated: a head's readers may become
  //    heads in turn. MatMuls stay: they are what the region is for,
  //  - except an attention's projections: a MatMul whose result (after its bias Add) is
  //    split into heads (Reshape to rank 4, then Transpose), or whose input is the heads
  //    merged back (Reshape of a Transpose). onnxruntime's Attention fusion matches
  //    MatMul -> Add -> Reshape -> Transpose on both sides; a Gemm on a 2-D view is not fused.
  static bool AttentionProjection(const Node& mm) {
    auto read_only_by = [](const Value* v, const char* op) -> Node* {
      if (!v || v->uses().size() != 1 || v->IsGraphOutput()) return nullptr;
      Node* u = v->uses()[0].node;
      return u->Is(op) ? u : nullptr;
    };
    const Value* y = mm.output(0);
    if (Node* add = read_only_by(y, "Add")) y = add->output(0);
    if (y && !y->IsGraphOutput()) {
      for (const Use& u : y->uses()) {
        if (!u.node->Is("Reshape") || u.input_index != 0) continue;
        auto s = StaticOf(u.node->output(0));
        auto shape = ShapeOf(u.node->output(0));
        size_t rank = s ? s->size() : shape ? shape->size() : 0;
        if (rank == 4 && read_only_by(u.node->output(0), "Transpose")) return true;
      }
    }
    const Node* merge = mm.input(0) ? mm.input(0)->producer() : nullptr;
    return merge && merge->Is("Reshape") && merge->input(0) && merge->input(0)->producer() &&
           merge->input(0)->producer()->Is("Transpose");
  }

  static void Trim(Region& r) {
    auto statistics_reader = [](const Use& u) {
      const std::string& op = u.node->op_type();
      return op == "LayerNormalization" || op.rfind("Reduce", 0) == 0;
    };
    auto is_head = [&](Node* n) {
      std::vector<int> data;
      Eligible(n, r.leading, n->graph(), &data);
      return std::none_of(data.begin(), data.end(), [&](int i) {
        Node* p = n->input(i)->producer();
        return p && (r.in.contains(p) || IsOp(p, "Reshape"));
      });
    };
    std::deque<Node*> work;
    for (Node* n : r.nodes) {
      const auto& uses = n->output(0)->uses();
      if (std::any_of(uses.begin(), uses.end(), statistics_reader) ||
          (n->op_type() == "MatMul" && AttentionProjection(*n))) {
        r.in.erase(n);
        for (const Use& u : uses) work.push_back(u.node);
      } else {
        work.push_back(n);
      }
    }
    while (!work.empty()) {
      Node* n = work.front();
      work.pop_front();
      if (!r.in.contains(n) || n->op_type() == "MatMul" || !is_head(n)) continue;
      r.in.erase(n);
      for (const Use& u : n->output(0)->uses()) work.push_back(u.node);
    }
    std::erase_if(r.nodes, [&](Node* n) { return !r.in.contains(n); });
  }

  // Entries, exits and the node count change of running the region on 2-D values.
  static void Plan(Region& r) {
    for (int64_t d : r.leading) r.m *= d;
    absl::flat_hash_set<Value*> seen;
    for (Node* n : r.nodes) {
      std::vector<int> data;
      Eligible(n, r.leading, n->graph(), &data);
      for (int i : data) {
        Value* v = n->input(i);
        if ((v->producer() && r.in.contains(v->producer())) || !seen.insert(v).second) continue;
        Entry e{v, v, false, *LastDimIfRegionShaped(v, r.leading)};
        bool only_region = !v->IsGraphOutput() && std::all_of(v->uses().begin(), v->uses().end(),
                                                              [&](const Use& u) { return r.in.contains(u.node); });
        Node* p = v->producer();
        if (IsOp(p, "Reshape") && p->input(0)) {
          e.source = p->input(0);
          auto xs = StaticOf(e.source);
          e.bypass = xs && *xs == std::vector<int64_t>{r.m, e.c};
          r.entry_cost += e.bypass ? (only_region ? -1 : 0) : (only_region ? 0 : 1);
        } else {
          r.entry_cost += 1;
        }
        r.entries.push_back(e);
      }
    }
    for (Node* n : r.nodes) {
      Value* v = n->output(0);
      bool outside = v->IsGraphOutput() || std::any_of(v->uses().begin(), v->uses().end(),
                                                       [&](const Use& u) { return !r.in.contains(u.node); });
      if (!outside) continue;
      Exit x{v, {}, {}, r.c_out[n]};
      std::vector<int64_t> shape = r.leading;
      shape.push_back(x.c);
      const Shape in = StaticShape(shape);
      bool all_reshapes = !v->IsGraphOutput();
      int64_t cost = 0;
      for (const Use& u : v->uses()) {
        if (!all_reshapes) break;
        if (r.in.contains(u.node)) continue;
        auto s = IsOp(u.node, "Reshape") && u.input_index == 0 ? ShapeInput(*u.node) : std::nullopt;
        auto t = s ? ResolveReshape(in, *s, AllowZero(*u.node)) : std::nullopt;
        std::vector<int64_t> target;
        for (const Dim& d : t ? *t : Shape{}) {
          if (!d.is_static() || d.value <= 0) break;
          target.push_back(d.value);
        }
        if (!t || target.size() != t->size() ||
            std::find(x.reshapes.begin(), x.reshapes.end(), u.node) != x.reshapes.end()) {
          all_reshapes = false;
          break;
        }
        if (target == std::vector<int64_t>{r.m, x.c} && !u.node->output(0)->IsGraphOutput()) cost -= 1;
        x.reshapes.push_back(u.node);
        x.targets.push_back(std::move(target));
      }
      if (!all_reshapes) {
        x.reshapes.clear();
        x.targets.clear();
        cost = 1;
      }
      r.exit_cost += cost;
      r.exits.push_back(std::move(x));
    }
    for (Node* n : r.nodes) {
      if (n->op_type() != "MatMul" || n->output(0)->uses().size() != 1) continue;
      Node* add = n->output(0)->uses()[0].node;
      if (!IsOp(add, "Add") || !r.in.contains(add)) continue;
      Shape a = {Dim::Static(r.m), Dim::Static(*LastDimIfRegionShaped(n->input(0), r.leading))};
      if (GemmBlocker(*n, *add, a).empty()) ++r.gemms;
    }
    r.delta = r.entry_cost + r.exit_cost - r.gemms;
  }

  static Status Rewrite(Region& r, Rewriter& rw) {
    absl::flat_hash_map<Value*, Value*> flat;  // old region-shaped value -> its [M,c] value
    for (const Entry& e : r.entries) {
      if (e.bypass) {
        flat[e.value] = e.source;
      } else {
        Value* y = rw.Op("Reshape", {e.source, rw.Int64s({r.m, e.c})});
        SetType(y, ElementType(e.value), {r.m, e.c});
        flat[e.value] = y;
      }
    }
    // Topological order within the region.
    absl::flat_hash_map<Node*, int> pending;
    for (Node* n : r.nodes) {
      int k = 0;
      for (Value* v : n->inputs())
        if (v && v->producer() && r.in.contains(v->producer())) ++k;
      pending[n] = k;
    }
    std::vector<Node*> order;
    for (Node* n : r.nodes)
      if (pending[n] == 0) order.push_back(n);
    for (size_t i = 0; i < order.size(); ++i) {
      for (const Use& u : order[i]->output(0)->uses())
        if (r.in.contains(u.node) && --pending[u.node] == 0) order.push_back(u.node);
    }
    if (order.size() != r.nodes.size()) return absl::InternalError("flatten-region: the region has a cycle");
    for (Node* n : order) {
      std::vector<Value*> inputs;
      for (Value* v : n->inputs()) {
        auto it = v ? flat.find(v) : flat.end();
        inputs.push_back(it != flat.end() ? it->second : v);
      }
      std::vector<onnx::AttributeProto> attributes;
      for (const Attribute& a : n->attributes()) attributes.push_back(a.proto());
      Value* y = rw.Op(n->op_type(), std::move(inputs), std::move(attributes));
      SetType(y, ElementType(n->output(0)), {r.m, r.c_out[n]});
      flat[n->output(0)] = y;
    }
    // Everything new is created before anything is erased (the root may be an exit's Reshape).
    std::vector<std::pair<Node*, Value*>> bypassed;  // exit Reshape to [M,c] -> its 2-D value
    std::map<std::vector<int64_t>, Value*> targets;  // one shape constant per target
    for (const Exit& x : r.exits) {
      Value* y = flat[x.value];
      if (!x.reshapes.empty()) {
        for (size_t i = 0; i < x.reshapes.size(); ++i) {
          Node* reshape = x.reshapes[i];
          if (x.targets[i] == std::vector<int64_t>{r.m, x.c} && !reshape->output(0)->IsGraphOutput()) {
            bypassed.emplace_back(reshape, y);
          } else {
            rw.SetInput(reshape, 0, y);
            // Its shape input may say the same of the 2-D value ([2,-1,2,16] of [16,32]).
            Shape flat_in = {Dim::Static(r.m), Dim::Static(x.c)};
            auto s = ShapeInput(*reshape);
            auto same = s ? ResolveReshape(flat_in, *s, AllowZero(*reshape)) : std::nullopt;
            if (!same || !SameShape(*same, StaticShape(x.targets[i]))) {
              Value*& target = targets[x.targets[i]];
              if (!target) target = rw.Int64s(x.targets[i]);
              rw.SetInput(reshape, 1, target);
            }
          }
        }
        continue;
      }
      std::vector<int64_t> shape = r.leading;
      shape.push_back(x.c);
      Value* back = rw.Op("Reshape", {y, rw.Int64s(shape)});
      if (x.value->has_type()) *back->mutable_info()->mutable_type() = x.value->info()->type();
      else SetType(back, ElementType(x.value), shape);
      OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(x.value, back, GraphOutputs::kKeepNames));
    }
    for (auto& [reshape, y] : bypassed) {
      OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(reshape->output(0), y, GraphOutputs::kKeepNames));
      OS_RETURN_IF_ERROR(rw.EraseNode(reshape));
    }
    // The old region (every output now unused), then entry Reshapes nothing reads any more.
    std::vector<Node*> dead(order.rbegin(), order.rend());
    for (const Entry& e : r.entries)
      if (Node* p = e.value->producer(); IsOp(p, "Reshape") && !r.in.contains(p)) dead.push_back(p);
    rw.EraseDead(std::move(dead));
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<RewriteRule> MakeFlattenRegionRule(std::string root_op) {
  return std::make_unique<FlattenRegionRule>(std::move(root_op));
}

}  // namespace onnxsurgeon::passes::reshapes
