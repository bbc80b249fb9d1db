// MutationKey: the passkey every raw IR mutator takes as its first parameter.
//
// Its constructor is private, so only its friends can make one: the IR itself (Graph,
// Node, Value, Model, Function), the importer that builds graphs from protobuf
// (core/io), the Rewriter (core/rewrite) and the test-only
// IrTestAccess (tests/cpp/ir_test_access.h). Everything else, passes, rules, the CLI and
// the Python bindings, changes graph structure through a Rewriter, which stamps the nodes
// it creates with their rule (provenance) and tells its listener what changed.
//
//   Given:   a pass holding Node* n and Value* v
//   Execute: n->SetInput(0, v)                      does not compile (no key)
//            Rewriter rw; rw.SetInput(n, 0, v)      compiles; the listener hears of it
//
// What is not graph structure stays public: names, a value's type info, value_info,
// the proto shells, TopologicalSort (docs/design.md, "How mutations flow").
#pragma once

namespace onnxsurgeon {

class MutationKey {
 private:
  MutationKey() {}  // user-provided: `MutationKey{}` is no aggregate initialization
  friend class Graph;
  friend class Node;
  friend class Value;
  friend class Model;
  friend class Function;
  friend class GraphImporter;
  friend class Rewriter;
  friend struct IrTestAccess;
};

}  // namespace onnxsurgeon
