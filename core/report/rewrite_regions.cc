#include "core/report/rewrite_regions.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/diff/model_diff.h"

namespace onnxsurgeon {
namespace {

std::string Quote(const std::string& s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}}), "\"");
}

std::string Shorten(const std::string& s, size_t n = 28) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

// Groups `touched` nodes into connected components (through values between them).
std::vector<std::vector<Node*>> Components(const std::vector<Node*>& touched) {
  std::map<const Node*, size_t> index;
  for (size_t i = 0; i < touched.size(); ++i) index[touched[i]] = i;
  std::vector<size_t> parent(touched.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (size_t i = 0; i < touched.size(); ++i) {
    for (const Value* v : touched[i]->outputs()) {
      if (!v) continue;
      for (const auto& use : v->uses()) {
        auto it = index.find(use.node);
        if (it != index.end()) parent[find(i)] = find(it->second);
      }
    }
  }
  std::map<size_t, std::vector<Node*>> groups;
  for (size_t i = 0; i < touched.size(); ++i) groups[find(i)].push_back(touched[i]);
  std::vector<std::vector<Node*>> out;
  for (auto& [root, nodes] : groups) out.push_back(std::move(nodes));
  return out;
}

// DOT for `nodes` (filled) and the values around them; neighbour producers and users grey.
std::string Dot(const std::vector<Node*>& nodes, const std::string& label) {
  std::set<const Node*> inside(nodes.begin(), nodes.end());
  std::map<const Node*, std::string> id;
  std::string out = absl::StrCat("digraph G {\n  graph [rankdir=TB, fontsize=10, label=", Quote(label),
                                 ", labelloc=t];\n  node [fontname=\"Helvetica\", fontsize=10];\n"
                                 "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n");
  auto node_id = [&](const Node* n) {
    auto it = id.find(n);
    if (it != id.end()) return it->second;
    std::string name = absl::StrCat("n", id.size());
    id[n] = name;
    bool in = inside.count(n) > 0;
    absl::StrAppend(
        &out, "  ", name, " [shape=box, style=\"rounded,filled\", fillcolor=", in ? "\"#cfe3ff\"" : "\"#eeeeee\"",
        ", color=", in ? "\"#1f5fbf\"" : "\"#aaaaaa\"", ", label=",
        Quote(absl::StrCat(n->op_type(), n->name().empty() ? std::string() : absl::StrCat("\n", Shorten(n->name())))),
        "];\n");
    return name;
  };
  size_t values = 0;
  std::map<const Value*, std::string> value_id;
  auto value_node = [&](const Value* v, const char* style) {
    auto it = value_id.find(v);
    if (it != value_id.end()) return it->second;
    std::string name = absl::StrCat("v", values++);
    value_id[v] = name;
    absl::StrAppend(&out, "  ", name, " [shape=", style, ", fontsize=8, label=", Quote(Shorten(v->name(), 24)), "];\n");
    return name;
  };
  for (const Node* n : nodes) {
    std::string me = node_id(n);
    for (const Value* v : n->inputs()) {
      if (!v) continue;
      if (v->producer() && inside.count(v->producer())) continue;  // drawn from the producer's side
      if (v->producer()) {
        absl::StrAppend(&out, "  ", node_id(v->producer()), " -> ", me, " [label=", Quote(Shorten(v->name(), 20)),
                        "];\n");
      } else {
        std::string src = value_node(v, v->IsInitializer() ? "note" : "ellipse");
        absl::StrAppend(&out, "  ", src, " -> ", me, ";\n");
      }
    }
    for (const Value* v : n->outputs()) {
      if (!v) continue;
      bool drawn = false;
      for (const auto& use : v->uses()) {
        absl::StrAppend(&out, "  ", me, " -> ", node_id(use.node), " [label=", Quote(Shorten(v->name(), 20)), "];\n");
        drawn = true;
      }
      if (v->IsGraphOutput() || !drawn) {
        std::string sink = value_node(v, "ellipse");
        absl::StrAppend(&out, "  ", me, " -> ", sink, ";\n");
      }
    }
  }
  absl::StrAppend(&out, "}\n");
  return out;
}

std::string OpsTitle(const std::vector<Node*>& nodes) {
  std::map<std::string, int> ops;
  for (const Node* n : nodes) ++ops[n->op_type()];
  std::vector<std::string> parts;
  for (const auto& [op, n] : ops) parts.push_back(n > 1 ? absl::StrCat(n, "x ", op) : op);
  return parts.empty() ? "nothing" : absl::StrJoin(parts, ", ");
}

std::set<std::string> ValueNames(const std::vector<Node*>& nodes) {
  std::set<std::string> names;
  for (const Node* n : nodes) {
    for (const Value* v : n->inputs())
      if (v) names.insert(v->name());
    for (const Value* v : n->outputs())
      if (v) names.insert(v->name());
  }
  return names;
}

}  // namespace

std::vector<RewriteRegion> FindRewriteRegions(const Model& before, const Model& after, size_t max_regions,
                                              size_t max_nodes) {
  NodeMatching m = MatchNodes(before.graph(), after.graph());
  std::vector<Node*> touched_before = m.removed, touched_after = m.added;
  for (const auto& [a, b] : m.matched) {
    if (!NodeDifferences(*a, *b).empty()) {
      touched_before.push_back(a);
      touched_after.push_back(b);
    }
  }
  std::vector<std::vector<Node*>> groups_before = Components(touched_before);
  std::vector<std::vector<Node*>> groups_after = Components(touched_after);
  std::vector<bool> after_used(groups_after.size());
  struct Pair {
    std::vector<Node*> before, after;
  };
  std::vector<Pair> pairs;
  for (auto& group : groups_before) {
    Pair p{group, {}};
    std::set<std::string> names = ValueNames(group);
    for (size_t j = 0; j < groups_after.size(); ++j) {
      if (after_used[j]) continue;
      std::set<std::string> other = ValueNames(groups_after[j]);
      if (std::any_of(other.begin(), other.end(), [&](const std::string& s) { return names.count(s) > 0; })) {
        after_used[j] = true;
        p.after.insert(p.after.end(), groups_after[j].begin(), groups_after[j].end());
      }
    }
    pairs.push_back(std::move(p));
  }
  for (size_t j = 0; j < groups_after.size(); ++j)
    if (!after_used[j]) pairs.push_back({{}, groups_after[j]});
  std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& x, const Pair& y) {
    return x.before.size() + x.after.size() > y.before.size() + y.after.size();
  });

  std::vector<RewriteRegion> regions;
  for (Pair& p : pairs) {
    if (regions.size() == max_regions) break;
    RewriteRegion r;
    r.nodes_before = p.before.size();
    r.nodes_after = p.after.size();
    r.title = absl::StrCat(OpsTitle(p.before), " -> ", OpsTitle(p.after));
    bool cut = p.before.size() > max_nodes || p.after.size() > max_nodes;
    if (p.before.size() > max_nodes) p.before.resize(max_nodes);
    if (p.after.size() > max_nodes) p.after.resize(max_nodes);
    if (cut) absl::StrAppend(&r.title, " (first ", max_nodes, " nodes drawn)");
    r.dot_before = Dot(p.before, "before");
    r.dot_after = Dot(p.after, "after");
    regions.push_back(std::move(r));
  }
  return regions;
}

}  // namespace onnxsurgeon
