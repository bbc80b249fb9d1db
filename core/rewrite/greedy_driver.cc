#include "core/rewrite/greedy_driver.h"

#include <algorithm>
#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace onnxsurgeon {
namespace {

class Worklist : public RewriteListener {
 public:
  static constexpr size_t kRevisitUsersLimit = 8;
  explicit Worklist(std::vector<RewriteListener*> also) : also_(std::move(also)) {}

  // Each push takes a ticket. An entry whose ticket is no longer its node's was erased while
  // queued; a node created later at the same address has a ticket of its own, so it is
  // visited in its own place, not in the erased node's (which made the order depend on
  // where the allocator put it).
  void Push(Node* n) {
    if (n && queued_.try_emplace(n, next_ticket_).second) queue_.emplace_back(n, next_ticket_++);
  }
  Node* Pop() {
    while (!queue_.empty()) {
      auto [n, ticket] = queue_.front();
      queue_.pop_front();
      auto it = queued_.find(n);
      if (it == queued_.end() || it->second != ticket) continue;  // erased while queued
      queued_.erase(it);
      return n;
    }
    return nullptr;
  }
  void NodeCreated(Node* n) override {
    for (RewriteListener* l : also_) l->NodeCreated(n);
    Push(n);
  }
  void NodeErased(Node* n) override {
    for (RewriteListener* l : also_) l->NodeErased(n);
    if (erased_names_) erased_names_->emplace_back(n->name(), FirstOutputName(*n));
    queued_.erase(n);
    died_.erase(n);
  }
  // True when a rewrite left `n` without users (nodes dead before the pass are dce's).
  bool Died(Node* n) const { return died_.contains(n) && !HasUsedOutput(*n); }
  static bool HasUsedOutput(const Node& n) {
    for (Value* out : n.outputs())
      if (out && out->HasUsers()) return true;
    return false;
  }
  void NodeModified(Node* n) override {
    for (RewriteListener* l : also_) l->NodeModified(n);
    Push(n);
  }
  void UseRemoved(Value* v) override {
    for (RewriteListener* l : also_) l->UseRemoved(v);
    if (v->IsInitializer() && !v->HasUsers() && orphan_set_.insert(v).second) orphans_.push_back(v);
    if (Node* p = v->producer(); p && !HasUsedOutput(*p)) died_.insert(p);
    Push(v->producer());
    // A few remaining users may now match a pattern that needs `v` used only inside the
    // match; a widely shared value (a constant feeding thousands of nodes) is not
    // rescanned, which keeps the driver linear.
    if (v->uses().size() <= kRevisitUsersLimit)
      for (const Use& u : v->uses()) Push(u.node);
  }

  // Initializers the rewrites left without users, in the order they were orphaned.
  std::vector<Value*> TakeOrphanedInitializers() { return std::move(orphans_); }
  // Names (and first output names) of the nodes erased from now on are appended here
  // (null: not recorded).
  void RecordErasedNames(std::vector<std::pair<std::string, std::string>>* names) { erased_names_ = names; }

 private:
  std::vector<RewriteListener*> also_;  // the pass's listener, the facts that listen
  std::vector<std::pair<std::string, std::string>>* erased_names_ = nullptr;
  std::deque<std::pair<Node*, uint64_t>> queue_;  // node, ticket
  absl::flat_hash_map<Node*, uint64_t> queued_;   // node -> its ticket while queued
  uint64_t next_ticket_ = 0;
  std::vector<Value*> orphans_;
  absl::flat_hash_set<Value*> orphan_set_;
  absl::flat_hash_set<Node*> died_;
};

void Collect(Graph& g, bool subgraphs, std::vector<Node*>& out) {
  for (Node* n : g.nodes()) {
    out.push_back(n);
    if (subgraphs)
      for (Graph* sub : n->subgraphs()) Collect(*sub, subgraphs, out);
  }
}

}  // namespace

StatusOr<std::map<std::string, int64_t>> ApplyRulesGreedily(Model& model, const std::vector<const RewriteRule*>& rules,
                                                            const GreedyOptions& options) {
  RewriteFacts facts(model);
  return ApplyRulesGreedily(model, rules, facts, options);
}

StatusOr<std::map<std::string, int64_t>> ApplyRulesGreedily(Model& model, const std::vector<const RewriteRule*>& rules,
                                                            RewriteFacts& facts, const GreedyOptions& options) {
  // Rules by root op, each list in benefit order (stable: registration order on ties).
  absl::flat_hash_map<std::string, std::vector<const RewriteRule*>> by_root;
  std::vector<const RewriteRule*> any_root;
  for (const RewriteRule* rule : rules) {
    if (rule->root_op().empty()) any_root.push_back(rule);
    else by_root[rule->root_domain() + "::" + rule->root_op()].push_back(rule);
  }
  auto by_benefit = [](const RewriteRule* a, const RewriteRule* b) { return a->benefit() > b->benefit(); };
  for (auto& [_, list] : by_root) std::stable_sort(list.begin(), list.end(), by_benefit);
  std::stable_sort(any_root.begin(), any_root.end(), by_benefit);

  std::vector<Node*> initial;
  Collect(model.graph(), options.include_subgraphs, initial);
  if (options.include_functions)
    for (auto& f : model.functions()) Collect(f->body(), options.include_subgraphs, initial);

  if (!options.top_down) std::reverse(initial.begin(), initial.end());
  std::vector<RewriteListener*> listeners = {&facts};  // facts kept current (TypeFacts)
  if (options.listener) listeners.push_back(options.listener);
  Worklist worklist(std::move(listeners));
  for (Node* n : initial) worklist.Push(n);
  int64_t limit = options.max_rewrites >= 0 ? options.max_rewrites : 10 * static_cast<int64_t>(initial.size()) + 1000;

  std::map<std::string, int64_t> counts;
  int64_t rewrites = 0;
  Rewriter rewriter(&worklist);
  std::string why;
  std::vector<const RewriteRule*> candidates;
  std::vector<std::pair<std::string, std::string>> erased_by_step;
  if (options.budget) worklist.RecordErasedNames(&erased_by_step);
  while (!(options.budget && options.budget->exhausted())) {  // a spent budget stops as a fixed point does
    Node* n = worklist.Pop();
    if (!n) break;
    if (options.visited) options.visited->fetch_add(1, std::memory_order_relaxed);
    if (worklist.Died(n)) {  // e.g. the Constant feeding an epsilon a rewrite consumed
      OS_RETURN_IF_ERROR(rewriter.EraseNode(n));
      continue;
    }
    candidates.clear();
    auto it = by_root.find(std::string(CanonicalDomain(n->domain())) + "::" + n->op_type());
    if (it != by_root.end()) candidates = it->second;
    if (!any_root.empty()) {
      candidates.insert(candidates.end(), any_root.begin(), any_root.end());
      std::stable_sort(candidates.begin(), candidates.end(), by_benefit);
    }
    for (const RewriteRule* rule : candidates) {
      rewriter.SetInsertionPoint(n);
      rewriter.SetRule(rule->name());
      why.clear();
      std::string node_name = n->name(), node_output = FirstOutputName(*n);
      erased_by_step.clear();
      auto changed = rule->MatchAndRewrite(n, rewriter, facts, options.explain ? &why : nullptr);
      if (!changed.ok()) {
        return Status(changed.status().code(), absl::StrCat("rule '", rule->name(), "' at node '", node_name,
                                                            "': ", changed.status().message()));
      }
      if (*changed) {
        ++counts[rule->name()];
        if (options.budget) {
          RewriteStep step{rule->name(), node_name, {node_name}, {node_output}};
          for (const auto& [erased, output] : erased_by_step) {
            if (output == node_output) continue;  // the root
            step.nodes.push_back(erased);
            step.outputs.push_back(output);
          }
          options.budget->Spend(std::move(step));
        }
        if (++rewrites > limit) {
          return absl::ResourceExhaustedError(absl::StrCat("rewriting did not converge after ", limit,
                                                           " rewrites (last rule: '", rule->name(),
                                                           "'); the rule set undoes its own work"));
        }
        break;  // `n` may be gone; whatever changed is back on the worklist
      }
      if (options.explain) options.explain(rule->name(), *n, why);
    }
  }
  // Weights a rewrite replaced (a reshaped scale, a folded constant) go with it; graph
  // inputs stay, as do initializers that were unused before the pass.
  for (Value* v : worklist.TakeOrphanedInitializers()) {
    if (v->IsInitializer() && !v->IsGraphInput() && !v->HasUsers()) OS_RETURN_IF_ERROR(rewriter.RemoveInitializer(v));
  }
  return counts;
}

}  // namespace onnxsurgeon
