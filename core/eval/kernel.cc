#include "core/eval/kernel.h"

#include "onnx/defs/schema.h"

#include <algorithm>

#include "core/eval/kernels_internal.h"
#include "core/ir/dtypes.h"
#include "core/ir/model.h"

namespace onnxsurgeon::eval {

std::optional<std::vector<int64_t>> KernelContext::GetInts(std::string_view name) const {
  const Attribute* a = node_.FindAttribute(name);
  if (!a) return std::nullopt;
  return a->ints();
}

Status KernelContext::CheckSize(int64_t bytes) const {
  if (bytes > max_output_bytes_) {
    return absl::ResourceExhaustedError(absl::StrCat(node_.op_type(), " output would take ", bytes, " bytes, over the ",
                                                     max_output_bytes_, " byte budget"));
  }
  return absl::OkStatus();
}

StatusOr<NewArray> KernelContext::Allocate(int32_t dtype, std::vector<int64_t> dims) const {
  size_t es = ElementSize(dtype);
  if (es == 0)
    return absl::UnimplementedError(absl::StrCat("no kernel writes ", DataTypeNameLower(dtype), " elements"));
  OS_ASSIGN_OR_RETURN(int64_t n, NumElements(dims));
  if (n > max_output_bytes_ / static_cast<int64_t>(es) + 1) OS_RETURN_IF_ERROR(CheckSize(max_output_bytes_ + 1));
  OS_RETURN_IF_ERROR(CheckSize(n * static_cast<int64_t>(es)));
  return AllocateArray(dtype, std::move(dims));
}

Status ExpectInputs(const KernelContext& ctx, Inputs in, size_t min, size_t max) {
  if (in.size() < min || in.size() > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(ctx.node().op_type(), " takes ", min, "..", max, " inputs, got ", in.size()));
  }
  for (size_t i = 0; i < min; ++i) {
    if (!in[i]) return absl::InvalidArgumentError(absl::StrCat(ctx.node().op_type(), " input ", i, " is required"));
  }
  return absl::OkStatus();
}

StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

StatusOr<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(absl::StrCat("shapes do not broadcast: dim ", da, " vs ", db));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  std::vector<int64_t> strides(out.size(), 0);
  std::vector<int64_t> in_strides = Strides(in);
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) strides[lead + i] = in[i] == 1 ? 0 : in_strides[i];
  return strides;
}

std::vector<Array> One(Array a) {
  std::vector<Array> v;
  v.push_back(std::move(a));
  return v;
}

StatusOr<std::optional<std::vector<int64_t>>> OptionalInts(Inputs in, size_t i) {
  if (i >= in.size() || !in[i]) return std::optional<std::vector<int64_t>>();
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> v, in[i]->Int64s());
  return std::optional<std::vector<int64_t>>(std::move(v));
}

namespace {

// Every family's kernels, sorted by op; an op's versions stay in registration order (the
// first that covers an opset wins). The op table (core/shape/op_table.h) holds the other
// per-op rules under the same key; its kernels are looked up here.
const std::vector<KernelDef>& Kernels() {
  static const std::vector<KernelDef>* kernels = [] {
    auto* defs = new std::vector<KernelDef>;  // never destroyed: folding runs during static destruction too
    AddElementwiseKernels(*defs);
    AddUnaryKernels(*defs);
    AddShapeKernels(*defs);
    AddIndexingKernels(*defs);
    AddReduceKernels(*defs);
    AddCastKernels(*defs);
    AddGeneratorKernels(*defs);
    AddResizeKernels(*defs);
    AddLinalgKernels(*defs);
    std::stable_sort(defs->begin(), defs->end(),
                     [](const KernelDef& a, const KernelDef& b) { return std::string_view(a.op_type) < b.op_type; });
    return defs;
  }();
  return *kernels;
}

}  // namespace

const KernelFn* FindKernel(std::string_view op_type, std::string_view domain, int64_t opset) {
  if (!CanonicalDomain(domain).empty()) return nullptr;
  const std::vector<KernelDef>& kernels = Kernels();
  auto it = std::lower_bound(kernels.begin(), kernels.end(), op_type,
                             [](const KernelDef& k, std::string_view op) { return std::string_view(k.op_type) < op; });
  for (; it != kernels.end() && it->op_type == op_type; ++it) {
    if (opset >= it->since && (it->until == 0 || opset <= it->until)) return &it->fn;
  }
  return nullptr;
}

std::vector<std::string> KernelOpTypes() {
  std::vector<std::string> ops;
  for (const KernelDef& k : Kernels())
    if (ops.empty() || ops.back() != k.op_type) ops.emplace_back(k.op_type);
  return ops;
}

namespace {

// Kernels index their inputs by position: the count and every required (non-optional,
// non-variadic) input are checked against onnx's schema before any kernel runs, so a
// malformed node (made by hand or by a pass) is refused, never dereferenced.
Status CheckInputsAgainstSchema(const Node& node, Inputs inputs, int64_t opset) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset),
                                                      std::string(CanonicalDomain(node.domain())));
  if (!schema) return absl::OkStatus();  // the kernel checks what it reads
  size_t n = inputs.size();
  while (n > 0 && !inputs[n - 1]) --n;
  if (static_cast<int>(n) < schema->min_input() || static_cast<int>(n) > schema->max_input())
    return absl::InvalidArgumentError(absl::StrCat(node.op_type(), " node '", node.name(), "' has ", n,
                                                   " inputs, its schema takes ", schema->min_input(), " to ",
                                                   schema->max_input()));
  const auto& formals = schema->inputs();
  for (size_t i = 0; i < n; ++i) {
    const bool optional = i < formals.size() ? formals[i].GetOption() == onnx::OpSchema::Optional
                                             : false;  // variadic tail: every element required
    if (!optional && !inputs[i])
      return absl::InvalidArgumentError(
          absl::StrCat(node.op_type(), " node '", node.name(), "' lacks its required input ", i));
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<std::vector<Array>> Evaluate(const Node& node, Inputs inputs, int64_t opset, int64_t max_output_bytes) {
  const KernelFn* fn = FindKernel(node.op_type(), node.domain(), opset);
  if (!fn) {
    return absl::UnimplementedError(absl::StrCat("no kernel for ", node.op_type(), " at opset ", opset));
  }
  KernelContext ctx(node, opset, max_output_bytes);
  OS_RETURN_IF_ERROR(CheckInputsAgainstSchema(node, inputs, opset));
  OS_ASSIGN_OR_RETURN(std::vector<Array> outs, (*fn)(ctx, inputs));
  if (outs.size() < node.num_outputs()) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.op_type(), " node declares ", node.num_outputs(), " outputs, the kernel made ", outs.size()));
  }
  outs.resize(node.num_outputs());
  for (const Array& a : outs) OS_RETURN_IF_ERROR(ctx.CheckSize(a.byte_size()));
  return outs;
}

}  // namespace onnxsurgeon::eval
