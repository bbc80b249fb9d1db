#include "core/ir/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "core/ir/node.h"

namespace onnxsurgeon {

bool Dim::SameAs(const Dim& other) const {
  if (is_static() || other.is_static()) return value == other.value;
  return is_symbolic() && symbol == other.symbol;
}

std::string Dim::ToString() const {
  if (is_static()) return absl::StrCat(value);
  return is_symbolic() ? symbol : "?";
}

int32_t ElementType(const Value* value) {
  if (!value) return 0;
  if (value->has_type() && value->type()->has_tensor_type() && value->type()->tensor_type().elem_type() != 0)
    return value->type()->tensor_type().elem_type();
  if (value->initializer()) return value->initializer()->meta().data_type();
  if (auto c = GetConstant(value)) return c->data_type;
  return 0;
}

std::optional<Shape> ShapeOf(const Value* value) {
  if (!value) return std::nullopt;
  Shape shape;
  if (const Tensor* t = value->initializer()) {
    for (int64_t d : t->meta().dims()) shape.push_back(Dim::Static(d));
    return shape;
  }
  if (value->producer() && value->producer()->op_type() == "Constant" && value->producer()->domain().empty()) {
    if (auto c = GetConstant(value)) {
      for (int64_t d : c->dims) shape.push_back(Dim::Static(d));
      return shape;
    }
  }
  std::optional<Shape> shape_of_type = ShapeOfType(value->type());
  if (shape_of_type && value->IsGraphInput() && value->graph()->kind() == GraphKind::kMain)
    for (Dim& d : *shape_of_type)
      if (d.is_symbolic()) d.symbol = InputSymbol(value, d.symbol);
  return shape_of_type;
}

std::string InputSymbol(const Value* value, const std::string& dim_param) {
  if (!value || !value->IsGraphInput() || value->graph()->kind() != GraphKind::kMain) return dim_param;
  for (const Value* earlier : value->graph()->inputs()) {
    if (earlier == value) break;
    const onnx::TypeProto* t = earlier->type();
    if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) continue;
    for (const auto& d : t->tensor_type().shape().dim())
      if (d.has_dim_param() && d.dim_param() == dim_param) return absl::StrCat(dim_param, "@", value->name());
  }
  return dim_param;
}

bool SymbolDeclaredAs(std::string_view symbol, std::string_view dim_param) {
  return symbol == dim_param || (symbol.size() > dim_param.size() && symbol.substr(0, dim_param.size()) == dim_param &&
                                 symbol[dim_param.size()] == '@');
}

std::optional<Shape> ShapeOfType(const onnx::TypeProto* type) {
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return std::nullopt;
  Shape shape;
  for (const auto& d : type->tensor_type().shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) shape.push_back(Dim::Static(d.dim_value()));
    else if (d.has_dim_param() && !d.dim_param().empty()) shape.push_back(Dim::Symbolic(d.dim_param()));
    else shape.push_back(Dim{});
  }
  return shape;
}

std::vector<int64_t> DimsOrMinusOne(const Shape& shape) {
  std::vector<int64_t> dims;
  dims.reserve(shape.size());
  for (const Dim& d : shape) dims.push_back(d.is_static() ? d.value : -1);
  return dims;
}

std::optional<std::vector<int64_t>> StaticShapeOf(const Value* value) { return StaticDims(ShapeOf(value)); }

std::optional<std::vector<int64_t>> StaticDims(const std::optional<Shape>& shape) {
  if (!shape) return std::nullopt;
  std::vector<int64_t> dims;
  for (const Dim& d : *shape) {
    if (!d.is_static()) return std::nullopt;
    dims.push_back(d.value);
  }
  return dims;
}

bool ShapesContradict(const onnx::TypeProto& declared, const onnx::TypeProto& computed) {
  if (!declared.has_tensor_type() || !computed.has_tensor_type()) return false;
  const auto& a = declared.tensor_type();
  const auto& b = computed.tensor_type();
  if (!a.has_shape() || !b.has_shape()) return false;
  if (a.shape().dim_size() != b.shape().dim_size()) return true;
  for (int i = 0; i < a.shape().dim_size(); ++i) {
    const auto& x = a.shape().dim(i);
    const auto& y = b.shape().dim(i);
    if (x.has_dim_value() && y.has_dim_value() && x.dim_value() >= 0 && y.dim_value() >= 0 &&
        x.dim_value() != y.dim_value())
      return true;
  }
  return false;
}

bool SameShape(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].SameAs(b[i])) return false;
  return true;
}

std::optional<int64_t> NumElements(const Shape& shape) {
  int64_t n = 1;
  for (const Dim& d : shape) {
    if (!d.is_static()) return std::nullopt;
    n *= d.value;
  }
  return n;
}

std::string ShapeToString(const Shape& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ",", [](std::string* out, const Dim& d) { out->append(d.ToString()); }),
                      "]");
}

}  // namespace onnxsurgeon
