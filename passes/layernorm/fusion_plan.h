// What the LayerNorm fusion rules share (fusion_rules.cc: the decomposed forms,
// custom_named_rule.cc: custom ops named like a LayerNorm): the reductions they read, the
// plan of the fused node, and how it is written (fusion_plan.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/rewrite/rewriter.h"
#include "core/rewrite/rule.h"
#include "passes/layernorm/fusion_rules.h"

namespace onnxsurgeon::layernorm::fusion {

// What a mean reduces: a ReduceMean's (or the ReduceSum's of ReduceSum * 1/N) axes
// (attribute, or constant input from opset 18 / 13) or every axis; a GlobalAveragePool's
// axes 2..rank-1 (tf2onnx writes reduce_mean over the last axis of a rank-3 tensor so).
// keepdims=0 is allowed here; CheckKeptAxes decides whether the axes are put back.
struct Reduction {
  bool all = false;
  std::vector<int64_t> axes;
  bool keepdims = true;
};

// Given a ReduceMean (or GlobalAveragePool) and x's rank (-1: unknown). Result its reduced
// axes, or nullopt with the reason.
std::optional<Reduction> ReadReduction(const Node& n, int64_t rank, std::string* why);
// The LayerNormalization axis for a reduction over the trailing axes of a rank-`rank`
// tensor (rank -1: unknown), or nullopt with a reason.
std::optional<int64_t> TrailingAxis(const Reduction& r, int64_t rank, std::string* why);
// Sorted distinct axes, non-negative when the rank is known; nullopt when a
// non-negative axis meets an unknown rank.
std::optional<std::vector<int64_t>> CanonicalAxes(const Reduction& r, int64_t rank);
// The element types LayerNormalization takes.
bool IsLayerNormType(int32_t t);

struct Plan {
  Value* x = nullptr;
  Value* scale = nullptr;  // null: ones
  Value* bias = nullptr;   // null: none
  int64_t axis = -1;
  float epsilon = 1e-5f;
  int32_t elem_type = 0;
  // Constant scale/bias written with leading 1-dims: dims to drop them to.
  std::optional<std::vector<int64_t>> scale_dims, bias_dims;
  // Normalized axes that are not the trailing ones (LayerNorm2d over axis 1 of NCHW):
  // x is transposed so they are, normalized, and transposed back. Empty: no transpose.
  std::vector<int64_t> perm;
  // Written out as standard ops rather than as one LayerNormalization (DecomposeWhen).
  bool decompose = false;
};

// Sets plan.axis (and plan.perm for normalized axes that are not the trailing ones) from
// the two reductions, which must agree.
bool PlanAxes(const Reduction& mean, const Reduction& var, int64_t rank, Plan& plan, std::string* why);
// Given the affine operand of a LayerNorm over plan.x from plan.axis. Result true when
// Mul/Add by it equals LayerNormalization's elementwise scale/bias over the normalized
// axes (same element type, no broadcasting beyond them, every normalized dim matched);
// `reshape_to` is set when a constant operand has leading 1-dims to drop.
bool CheckAffineOperand(const char* role, Value* operand, const Plan& plan,
                        std::optional<std::vector<int64_t>>* reshape_to, std::string* why);
// The plan written as standard ops at `opset`.
StatusOr<Value*> EmitDecomposed(Rewriter& rw, const Plan& plan, int64_t opset);
// The plan written as one LayerNormalization, or decomposed when plan.decompose.
StatusOr<Value*> EmitLayerNorm(Rewriter& rw, const Plan& plan);

// The rule for custom-domain ops named like a LayerNorm (`names`, case-insensitive).
std::unique_ptr<RewriteRule> MakeCustomNamedRule(std::vector<std::string> names, DecomposeWhen decompose);

}  // namespace onnxsurgeon::layernorm::fusion
