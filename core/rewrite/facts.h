// RewriteFacts: what rules know besides the graph, for one run of the driver.
//
// Rules are const and hold no state. What they read that is not on the node in front of
// them -- inferred types, a pass option decided per pipeline (is Gemm forbidden?), a memo
// of regions already refused -- lives here, and the driver hands it to every check by
// reference, as MLIR hands a DataFlowSolver& to its patterns. A fact is any type:
// `Get<T>()` builds it on first use (from the model when T(const Model&) or T(const Model*)
// exists, else T()), and a pass that knows more seeds it before the run with Emplace<T>.
// Facts derived from the graph must stay true under rewrites: a fact that is also a
// RewriteListener (TypeFacts, core/analysis/type_facts.h) is told of every change the
// driver's rewrites make, as the driver's own worklist is.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/ir/model.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon {

class RewriteFacts : public RewriteListener {
 public:
  explicit RewriteFacts(const Model& model) : model_(model) {}
  RewriteFacts(const RewriteFacts&) = delete;
  RewriteFacts& operator=(const RewriteFacts&) = delete;

  const Model& model() const { return model_; }

  // The fact of type T, built on first use.
  template <typename T>
  T& Get() {
    if (T* found = Find<T>()) return *found;
    if constexpr (std::is_constructible_v<T, const Model&>) return Emplace<T>(model_);
    else if constexpr (std::is_constructible_v<T, const Model*>) return Emplace<T>(&model_);
    else return Emplace<T>();
  }

  // The fact of type T if some pass or rule made it, else null.
  template <typename T>
  T* Find() {
    auto it = facts_.find(Key<T>());
    return it == facts_.end() ? nullptr : static_cast<T*>(it->second.get());
  }

  // Given constructor arguments. Execute (re)places the fact of type T. Result the fact.
  template <typename T, typename... Args>
  T& Emplace(Args&&... args) {
    auto holder = std::shared_ptr<void>(new T(std::forward<Args>(args)...), [](void* p) { delete static_cast<T*>(p); });
    T* fact = static_cast<T*>(holder.get());
    if constexpr (std::is_base_of_v<RewriteListener, T>) {
      if (auto old = facts_.find(Key<T>()); old != facts_.end())
        std::erase(listeners_, static_cast<RewriteListener*>(static_cast<T*>(old->second.get())));
      listeners_.push_back(fact);
    }
    facts_[Key<T>()] = std::move(holder);
    return *fact;
  }

  // The driver's events, passed on to the facts that listen.
  void NodeCreated(Node* node) override {
    for (RewriteListener* l : listeners_) l->NodeCreated(node);
  }
  void NodeErased(Node* node) override {
    for (RewriteListener* l : listeners_) l->NodeErased(node);
  }
  void NodeModified(Node* node) override {
    for (RewriteListener* l : listeners_) l->NodeModified(node);
  }
  void UseRemoved(Value* value) override {
    for (RewriteListener* l : listeners_) l->UseRemoved(value);
  }

 private:
  // One address per type: a key without RTTI.
  template <typename T>
  static const void* Key() {
    static const char key = 0;
    return &key;
  }

  const Model& model_;
  absl::flat_hash_map<const void*, std::shared_ptr<void>> facts_;
  std::vector<RewriteListener*> listeners_;  // the facts that listen, in the order made
};

}  // namespace onnxsurgeon
