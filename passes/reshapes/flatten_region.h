#pragma once
// flatten-region: a connected region of nodes that compute the same on a [M,c] view of
// values shaped [d0,...,dk,c] (static, rank >= 3, one leading shape L=[d0..dk] for the whole
// region, M = prod(L)) runs on the 2-D view instead: MatMul(A, B) with B rank 2, unary
// elementwise ops, binary elementwise ops whose other operand is a region value of the same
// shape or a co-operand that broadcasts the same on both views (rank 0, or rank 1 of size 1
// or c; a [1,1,c] would change the broadcast rank, so it keeps the node out). Entries get one
// Reshape to [M,c] each (none when the entry is a Reshape of a [M,c] value: it is bypassed);
// exits read by Reshapes only (not graph outputs) feed those Reshapes directly (a Reshape
// to [M,c] then goes); other exits get one Reshape back, which keeps their names. The
// region is rewritten only when that leaves fewer nodes, counting the MatMul + Add pairs
// that matmul-add-gemm then fuses; --debug-patterns shows the count of a refused region.
// New 2-D values carry their shape in memory only (value_info is never given a shape that
// is not true); the old values go with the old nodes.
//   Before:  v = Reshape(g[16,128], [2,8,128])   t = Tanh(Mul(v, 0.5))
//            y = Reshape(t, [-1,128])
//   After:   y = Tanh(Mul(g, 0.5))
//   Before:  h = Add(MatMul(x[2,5,32], W1), b1)  g = Gelu(h)   y = Add(MatMul(g, W2), b2)
//   After:   x2 = Reshape(x, [10,32])  y2 = Gemm(Gelu(Gemm(x2, W1, b1)), W2, b2)
//            y = Reshape(y2, [2,5,32])

#include <memory>
#include <string>

#include "core/rewrite/rule.h"

namespace onnxsurgeon::passes::reshapes {

// The rule rooted at `root_op` (MatMul or Reshape): both seed regions.
std::unique_ptr<RewriteRule> MakeFlattenRegionRule(std::string root_op);

}  // namespace onnxsurgeon::passes::reshapes
