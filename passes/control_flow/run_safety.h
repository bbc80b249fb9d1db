// Whether a node may run when its result is not wanted: if-to-where computes both branches
// of an If, so the untaken branch runs on data it was never meant to see. An op that only
// computes a wrong value there (Log of a negative, Div by a float zero: NaN or inf) is
// harmless, because Where picks elementwise from the taken branch; an op that raises on
// its data (a Gather index out of range, a Reshape whose element count does not match, a
// broadcast of shapes that do not match, an integer division by zero) would make the
// whole model fail. So a node is safe only when its op is on a list of ops that cannot
// raise, or its failure conditions are proven false from static facts (constant
// operands, shapes known statically or by the same symbol).
#pragma once

#include <string>

#include "core/analysis/type_facts.h"
#include "core/ir/node.h"

namespace onnxsurgeon::passes::control_flow {

// "" when running `node` on any data cannot raise or have an effect; else why it may.
std::string WhyNotSafeToRun(const Node& node, const TypeFacts& types);

// Whether shapes `a` and `b` are proven to broadcast (numpy rules): aligned from the last
// dim, each pair equal (static, or the same symbol) or one of them a static 1.
bool ProvenToBroadcast(const Shape& a, const Shape& b);

}  // namespace onnxsurgeon::passes::control_flow
