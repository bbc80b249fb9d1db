#include "core/ir/value.h"

#include <algorithm>
#include <iterator>

#include "core/ir/graph.h"
#include "core/ir/node.h"

namespace onnxsurgeon {

onnx::ValueInfoProto* Value::mutable_info() {
  if (info_overridden_) {
    graph_->DropInfoOverrides(this);
    info_overridden_ = false;
  }
  if (!info_) info_ = std::make_unique<onnx::ValueInfoProto>();
  return info_.get();
}

Status Value::SetName(std::string name) { return graph_->RenameValue(this, std::move(name)); }

void Value::AddUse(Node* node, int input_index) {
  if (node->use_slots_.size() <= static_cast<size_t>(input_index)) node->use_slots_.resize(input_index + 1, 0);
  node->use_slots_[input_index] = static_cast<uint32_t>(uses_.size());
  uses_.push_back({node, input_index});
}

void Value::RemoveUse(Node* node, int input_index) {
  uint32_t slot = node->use_slots_[input_index];
  if (slot >= uses_.size() || !(uses_[slot] == Use{node, input_index})) return;  // owner graph torn down
  const Use last = uses_.back();
  uses_[slot] = last;
  last.node->use_slots_[last.input_index] = slot;
  uses_.pop_back();
}

Status Value::ReplaceAllUsesWith(MutationKey key, Value* other, bool allow_graph_outputs) {
  if (other == this) return absl::OkStatus();
  if (other == nullptr) return absl::InvalidArgumentError("ReplaceAllUsesWith: null value");
  if (IsGraphOutput() && !allow_graph_outputs) {
    return absl::FailedPreconditionError(absl::StrCat("value '", name_,
                                                      "' is a graph output; replacing it changes the model's interface "
                                                      "(pass allow_graph_outputs to do so)"));
  }
  // Every use moves, in order: one pass, linear even for a value read by many nodes.
  std::vector<Use> uses = std::move(uses_);
  uses_.clear();
  for (const Use& use : uses) {
    use.node->inputs_[use.input_index] = other;
    other->AddUse(use.node, use.input_index);
  }
  if (IsGraphOutput()) {
    std::vector<GraphOutputUse> outs = graph_outputs_;
    for (const GraphOutputUse& out : outs) out.graph->SetOutput(key, out.output_index, other);
    // Keep the output names: the replacement takes over this value's name when it is a
    // plain intermediate of the same graph (renaming an input would change the interface).
    bool other_is_plain = other->graph() == graph_ && !other->IsGraphInput() && !other->IsInitializer() &&
                          other->graph_outputs().size() == outs.size();
    if (other_is_plain) {
      std::string old_name = name_;
      std::string fresh = graph_->UniqueName(old_name);
      OS_RETURN_IF_ERROR(graph_->RenameValue(this, fresh));
      OS_RETURN_IF_ERROR(graph_->RenameValue(other, old_name));
      if (info_ && !other->has_type()) {
        auto info = std::make_unique<onnx::ValueInfoProto>(*info_);
        other->info_ = std::move(info);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace onnxsurgeon
