// Kernels that make tensors from attributes and scalars: Constant (every attribute
// form but sparse_value), ConstantOfShape, Range.
#include <cmath>
#include <limits>

#include "core/eval/kernels_internal.h"

namespace onnxsurgeon::eval {
namespace {

template <typename T>
Array ListArray(int32_t dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
  auto buffer = std::make_shared<std::string>(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  Array a;
  a.dtype = dtype;
  a.dims = std::move(dims);
  a.bytes = std::string_view(*buffer);
  a.owner = std::move(buffer);
  return a;
}

StatusOr<std::vector<Array>> ConstantKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 0, 0));
  if (ctx.node().attributes().size() != 1) {
    return absl::InvalidArgumentError("Constant needs exactly one value attribute");
  }
  const Attribute& a = ctx.node().attributes().front();
  if (a.is_ref()) return absl::UnimplementedError("Constant with a function attribute reference");
  const onnx::AttributeProto& p = a.proto();
  const std::string& name = a.name();
  if (name == "value") {
    OS_ASSIGN_OR_RETURN(Array value, ArrayFromProto(p.t()));
    return One(std::move(value));
  }
  if (name == "value_float") return One(ListArray<float>(DT::FLOAT, {}, {p.f()}));
  if (name == "value_floats") {
    std::vector<float> v(p.floats().begin(), p.floats().end());
    return One(ListArray<float>(DT::FLOAT, {static_cast<int64_t>(v.size())}, v));
  }
  if (name == "value_int") return One(ListArray<int64_t>(DT::INT64, {}, {p.i()}));
  if (name == "value_ints") {
    std::vector<int64_t> v(p.ints().begin(), p.ints().end());
    return One(ListArray<int64_t>(DT::INT64, {static_cast<int64_t>(v.size())}, v));
  }
  if (name == "value_string") return One(StringArray({}, {p.s()}));
  if (name == "value_strings") {
    std::vector<std::string> v(p.strings().begin(), p.strings().end());
    int64_t n = static_cast<int64_t>(v.size());
    return One(StringArray({n}, std::move(v)));
  }
  if (name == "sparse_value") return absl::UnimplementedError("Constant with sparse_value is not folded");
  return absl::InvalidArgumentError(absl::StrCat("Constant with unknown attribute '", name, "'"));
}

StatusOr<std::vector<Array>> ConstantOfShapeKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, in[0]->Int64s());
  Array fill;
  if (const Attribute* v = ctx.attr("value")) {
    OS_ASSIGN_OR_RETURN(fill, ArrayFromProto(v->proto().t()));
    if (fill.numel() != 1) return absl::InvalidArgumentError("ConstantOfShape value must hold one element");
  } else {
    fill = ListArray<float>(DT::FLOAT, {1}, {0.0f});
  }
  if (fill.is_string()) return absl::UnimplementedError("ConstantOfShape of strings");
  OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(fill.dtype, std::move(dims)));
  size_t es = ElementSize(fill.dtype);
  for (int64_t i = 0, n = out.array.numel(); i < n; ++i) std::memcpy(out.data + i * es, fill.bytes.data(), es);
  return One(std::move(out.array));
}

StatusOr<std::vector<Array>> RangeKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 3, 3));
  for (const Array* x : in) {
    if (x->numel() != 1) return absl::InvalidArgumentError("Range inputs must be scalars");
    if (x->dtype != in[0]->dtype) return absl::InvalidArgumentError("Range inputs differ in type");
  }
  OS_ASSIGN_OR_RETURN(
      Array out, (Visit<kFloats | kSigned, StatusOr<Array>>(in[0]->dtype, [&](auto tag) -> StatusOr<Array> {
        using T = typename decltype(tag)::type;
        using C = typename Elem<T>::Compute;
        if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_same_v<T, int8_t>) {
          return absl::UnimplementedError("Range of this type");
        } else {
          C start = Elem<T>::Load(in[0]->bytes.data(), 0);
          C limit = Elem<T>::Load(in[1]->bytes.data(), 0);
          C delta = Elem<T>::Load(in[2]->bytes.data(), 0);
          if (delta == C(0)) return absl::InvalidArgumentError("Range with delta 0");
          // onnxruntime: n = ceil((limit - start) / delta) in double, values by accumulation.
          double count =
              std::ceil((1.0 * (static_cast<double>(limit) - static_cast<double>(start))) / static_cast<double>(delta));
          if (!(count > 0)) count = 0;
          if (count > 1e15) return ctx.CheckSize(std::numeric_limits<int64_t>::max());
          OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(in[0]->dtype, {static_cast<int64_t>(count)}));
          C value = start;
          for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) {
            Elem<T>::Store(out.data, i, value);
            if constexpr (std::is_integral_v<C>) {
              value = static_cast<C>(static_cast<uint64_t>(value) + static_cast<uint64_t>(delta));
            } else {
              value = static_cast<C>(value + delta);
            }
          }
          return std::move(out.array);
        }
      })));
  return One(std::move(out));
}

}  // namespace

void AddGeneratorKernels(std::vector<KernelDef>& t) {
  t.push_back({"Constant", 1, 0, ConstantKernel});
  t.push_back({"ConstantOfShape", 9, 0, ConstantOfShapeKernel});
  t.push_back({"Range", 11, 0, RangeKernel});
}

}  // namespace onnxsurgeon::eval
