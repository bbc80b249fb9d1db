// Cloning nodes (with their subgraphs) from one graph into another, e.g. to inline a
// function body or duplicate a region.
#pragma once

#include <functional>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "core/ir/graph.h"

namespace onnxsurgeon {

// Maps a source value to the destination value that stands for it (null if unmapped).
using ValueMap = absl::flat_hash_map<const Value*, Value*>;
// Rewrites an attribute while cloning (e.g. resolving a function's attribute references).
// Return false to drop the attribute.
using AttributeFilter = std::function<bool(const Attribute& source, onnx::AttributeProto& clone)>;

// Given a source node, a destination graph and position, and a map that already covers
// the node's inputs (and any outer value its subgraphs read).
// Execute creates a copy: same op, attributes (through `filter`) and shell fields, name
// `name_prefix` + source name (made unique), outputs with fresh unique names derived from
// the source names; subgraphs are deep-copied; `map` learns the new outputs.
// Result the clone, or an error naming an input the map does not cover.
// Outside core/ir the key is the Rewriter's: passes clone through Rewriter::Clone.
StatusOr<Node*> CloneNode(MutationKey key, const Node& source, Graph& destination, Node* insert_before, ValueMap& map,
                          std::string_view name_prefix = {}, const AttributeFilter& filter = {});

}  // namespace onnxsurgeon
