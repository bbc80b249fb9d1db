// The rules that recognise a LayerNorm in any of the forms exporters and hand-written
// code produce, and turn it into one LayerNormalization node. Used by fix-layernorm.
//
// Decomposed forms (x may be a Cast output; every Add/Mul matches either operand order):
//   mean = ReduceMean(x)                     axes as attribute or as constant input
//        | ReduceSum(x) * (1/N) | ReduceSum(x) / N   (passes/reductions/mean.h; N static)
//   mean'= mean (keepdims=1) | Reshape/Unsqueeze(mean) putting the reduced axes back
//          [then Expand to x's shape]        (and var' likewise, for var + eps)
//   d    = Sub(x, mean')
//   var  = ReduceMean(Pow(d, 2) | Mul(d, d))
//   std  = Sqrt(Add(var, eps))               eps: a scalar constant
//   n    = Div(d', std) | Mul(d', Reciprocal(std)) | Mul(d', Div(1, std))
//        | Mul(d', Pow(Add(var, eps), -0.5))  where d' is d or a duplicated Sub(x, mean)
//   y    = Add(Mul(n, scale), bias) | Mul(n, scale) | n
// and the Keras/tf2onnx form
//   inv  = Reciprocal(Sqrt(Add(var, eps))) [* gamma]
//   y    = Add(Mul(x, inv), Sub(beta, Mul(mean, inv)))
// and the Flax jax2tf+tf2onnx form, scale folded into the inverse
//   y    = Add(Mul(d', Mul(Reciprocal(Sqrt(Add(var', eps))), scale)), bias)
// Custom ops named like a LayerNorm in a non-standard domain (Custom_LayerNorm, ...) are
// taken by name, epsilon and axis from their attributes.
//
// Normalized axes that are not the trailing ones (LayerNorm2d over axis 1 of NCHW, with
// [C,1,1] scale and bias) become Transpose, LayerNormalization over the last axes with a
// [C] scale, Transpose back; that needs a known rank and constant affine operands.
//
// Refused, each with a reason under --debug-patterns: different axes on the two
// reductions, non-trailing axes of an input of unknown rank, keepdims=0 not put back (or put back
// onto other axes), a sum whose factor is not 1/N, an epsilon that is not a
// scalar constant, double precision (LayerNormalization computes in float), scale or
// bias that would broadcast beyond the normalized axes, and (by the matcher) any
// intermediate used outside the match. RMSNorm (no mean subtraction), (x-mean)/(std+eps)
// and unbiased variance do not match the forms at all.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/rewrite/rule.h"

namespace onnxsurgeon::layernorm {

// Op names taken as LayerNorms when found in a non-standard domain (case-insensitive).
const std::vector<std::string>& DefaultCustomNames();

// Whether `n` is an op of a non-standard domain named like one of `names` (case aside): what
// the custom-op rule takes as a LayerNorm (the target check asks it too).
bool IsCustomNamedLayerNorm(const Node& n, const std::vector<std::string>& names);

// Given a matched root node: true when the LayerNorm must come out decomposed (its graph
// is below opset 17, or the caller asked for to=decomposed). The rules then write the
// decomposition straight from the match, never a LayerNormalization taken apart later.
using DecomposeWhen = std::function<bool(const Node&)>;

// The rules, best first (full affine forms have the highest benefit). `decompose` null:
// always a LayerNormalization node.
std::vector<std::unique_ptr<RewriteRule>> MakeFusionRules(std::vector<std::string> custom_names,
                                                          DecomposeWhen decompose = nullptr);

}  // namespace onnxsurgeon::layernorm
