// IrTestAccess: the tests' MutationKey (core/ir/mutation_key.h), for tests of the raw IR
// itself (use lists, erase rules, cloning) that must call the mutators the Rewriter wraps.
// Only tests include this; passes and bindings go through core/rewrite's Rewriter.
#pragma once

#include "core/ir/mutation_key.h"

namespace onnxsurgeon {

struct IrTestAccess {
  static MutationKey Key() { return MutationKey(); }
};

}  // namespace onnxsurgeon
