// Matrix products: MatMul (numpy's matmul broadcasting) and Gemm.
#include "core/shape/ops/internal.h"

namespace onnxsurgeon::shape_ops {
namespace {

std::optional<Shape> MatMulShape(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return std::nullopt;
  Shape l = a.size() == 1 ? Shape{Dim::Static(1), a[0]} : a;
  Shape r = b.size() == 1 ? Shape{b[0], Dim::Static(1)} : b;
  const Dim& k1 = l.back();
  const Dim& k2 = r[r.size() - 2];
  if (k1.is_static() && k2.is_static() && k1.value != k2.value) return std::nullopt;
  Shape pl(l.begin(), l.end() - 2), pr(r.begin(), r.end() - 2);
  auto out = shape_rules::Broadcast({&pl, &pr});
  if (!out) return std::nullopt;
  if (a.size() != 1) out->push_back(l[l.size() - 2]);
  if (b.size() != 1) out->push_back(r.back());
  return out;
}

Out MatMul(const ShapeInput& in) {
  if (in.ins.size() != 2) return in.None();
  return in.Typed(in.x().elem, MatMulShape(in.x().shape, in.ins[1].shape));
}

Out Gemm(const ShapeInput& in) {
  if (in.ins.size() < 2 || in.x().shape.size() != 2 || in.ins[1].shape.size() != 2) return in.None();
  const Dim& m = in.x().shape[in.node.GetInt("transA", 0) ? 1 : 0];
  const Dim& cols = in.ins[1].shape[in.node.GetInt("transB", 0) ? 0 : 1];
  return in.Typed(in.x().elem, Shape{m, cols});
}

}  // namespace

void RegisterLinalg(OpTable& table) {
  table.Shape({"MatMul"}, MatMul);
  table.Shape({"Gemm"}, Gemm);
}

}  // namespace onnxsurgeon::shape_ops
