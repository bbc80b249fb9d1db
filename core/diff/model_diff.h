// `onnxsurgeon diff A B`: what changed between two models (typically before and after a
// rewrite): opsets, interface, op counts, initializers, value shapes and nodes.
//
// Nodes of the main graph are matched by name first (names unique in both models), then,
// among the rest, by structure: same op and outputs, else same op and inputs, else same op
// and first input, else same op and first output. A matched
// node is "changed" when its op, inputs, outputs or attributes differ; what no match
// claims is added or removed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/inspect/json.h"
#include "core/ir/model.h"

namespace onnxsurgeon {

struct ModelDiff {
  struct Change {
    std::string name;
    std::string before, after;  // empty: absent on that side
  };
  struct NodeChange {
    std::string name_before, name_after, op_before, op_after;
    std::vector<std::string> what;  // "op", "inputs", "outputs", "attribute alpha"
  };
  struct NodeRef {
    std::string name, op;
  };

  int64_t ir_before = 0, ir_after = 0;
  std::vector<Change> opsets;                                    // domain, version text
  std::vector<Change> inputs, outputs;                           // name, type text (float[1,3,224,224])
  std::map<std::string, std::pair<int64_t, int64_t>> op_counts;  // changed ops only
  int64_t nodes_before = 0, nodes_after = 0;
  std::vector<Change> initializers;  // name, "float[64,3] 768 B" / "" / data changed
  std::vector<Change> value_types;   // values in both whose type differs
  int64_t nodes_matched_by_name = 0, nodes_matched_by_structure = 0;
  std::vector<NodeChange> nodes_changed;
  std::vector<NodeRef> nodes_added, nodes_removed;

  bool Empty() const;
};

// Main-graph node matching: by unique name, then by op and outputs, op and inputs, op and
// first input, op and first output.
struct NodeMatching {
  std::vector<std::pair<Node*, Node*>> matched;  // before, after
  std::vector<Node*> removed, added;             // unmatched in before, in after
  int64_t by_name = 0, by_structure = 0;
};
NodeMatching MatchNodes(const Graph& before, const Graph& after);

// What differs between two matched nodes: "op", "inputs", "outputs", "attribute alpha".
std::vector<std::string> NodeDifferences(const Node& a, const Node& b);

ModelDiff DiffModels(const Model& before, const Model& after);
std::string FormatDiffText(const ModelDiff& diff, const std::string& name_before, const std::string& name_after,
                           size_t max_rows = 50);
Json DiffToJson(const ModelDiff& diff);

}  // namespace onnxsurgeon
