#include "core/ir/constant.h"

#include <cmath>
#include <cstring>

#include "core/ir/model.h"
#include "core/ir/node.h"

namespace onnxsurgeon {
namespace {
using T = onnx::TensorProto;

template <typename E>
std::vector<E> Decode(std::string_view raw) {
  std::vector<E> out(raw.size() / sizeof(E));
  if (!out.empty()) std::memcpy(out.data(), raw.data(), out.size() * sizeof(E));
  return out;
}

template <typename E, typename R>
std::vector<R> Convert(std::string_view raw) {
  std::vector<E> v = Decode<E>(raw);
  return std::vector<R>(v.begin(), v.end());
}

// `borrow`: the tensor outlives the result (an initializer), so its bytes need no copy.
std::optional<ConstantData> FromTensor(const Tensor& t, bool borrow) {
  ConstantData c;
  c.data_type = t.meta().data_type();
  c.dims.assign(t.meta().dims().begin(), t.meta().dims().end());
  if (borrow && t.has_raw_bytes()) {
    c.raw = t.raw_bytes();
    return c;
  }
  auto raw = t.RawBytesCopy();
  if (!raw.ok()) return std::nullopt;
  c.owned = std::make_shared<const std::string>(*std::move(raw));
  c.raw = *c.owned;
  return c;
}

template <typename E>
ConstantData FromList(int32_t data_type, const std::vector<E>& values, bool scalar) {
  ConstantData c;
  c.data_type = data_type;
  if (!scalar) c.dims = {static_cast<int64_t>(values.size())};
  c.owned =
      std::make_shared<const std::string>(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(E));
  c.raw = *c.owned;
  return c;
}
}  // namespace

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float BFloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) {  // inf / nan (nan stays quiet nan)
    return static_cast<uint16_t>(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0u));
  }
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (a < 0x38800000u) {  // half subnormal: round(|f| * 2^24) to nearest even
    float af;
    std::memcpy(&af, &a, 4);
    auto m = static_cast<uint32_t>(std::nearbyint(af * 16777216.0f));
    return static_cast<uint16_t>(sign | m);
  }
  a += 0xc8000fffu + ((a >> 13) & 1u);  // rebias exponent, round to nearest even
  return static_cast<uint16_t>(sign | (a >> 13));
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7fc0u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

int64_t ConstantData::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::optional<std::vector<double>> ConstantData::AsDoubles() const {
  switch (data_type) {
    case T::FLOAT: return Convert<float, double>(raw);
    case T::DOUBLE: return Decode<double>(raw);
    case T::FLOAT16: {
      std::vector<double> out;
      for (uint16_t h : Decode<uint16_t>(raw)) out.push_back(HalfToFloat(h));
      return out;
    }
    case T::BFLOAT16: {
      std::vector<double> out;
      for (uint16_t h : Decode<uint16_t>(raw)) out.push_back(BFloat16ToFloat(h));
      return out;
    }
    default: {
      auto ints = AsInt64s();
      if (!ints) return std::nullopt;
      return std::vector<double>(ints->begin(), ints->end());
    }
  }
}

std::optional<std::vector<int64_t>> ConstantData::AsInt64s() const {
  switch (data_type) {
    case T::INT64: return Decode<int64_t>(raw);
    case T::INT32: return Convert<int32_t, int64_t>(raw);
    case T::INT16: return Convert<int16_t, int64_t>(raw);
    case T::INT8: return Convert<int8_t, int64_t>(raw);
    case T::UINT8:
    case T::BOOL: return Convert<uint8_t, int64_t>(raw);
    case T::UINT16: return Convert<uint16_t, int64_t>(raw);
    case T::UINT32: return Convert<uint32_t, int64_t>(raw);
    case T::UINT64: return Convert<uint64_t, int64_t>(raw);
    default: return std::nullopt;
  }
}

std::optional<double> ConstantData::ScalarAsDouble() const {
  if (num_elements() != 1) return std::nullopt;
  auto v = AsDoubles();
  if (!v || v->size() != 1) return std::nullopt;
  return v->front();
}

std::optional<std::vector<int64_t>> ConstantInt64s(const Value* value) {
  for (int depth = 0; value && depth < 8; ++depth) {
    if (auto c = GetConstant(value)) return c->AsInt64s();
    const Node* p = value->producer();
    if (!p || !CanonicalDomain(p->domain()).empty()) return std::nullopt;
    const std::string& op = p->op_type();
    if (op != "Reshape" && op != "Squeeze" && op != "Unsqueeze" && op != "Flatten" && op != "Identity") {
      return std::nullopt;
    }
    value = p->input(0);  // element order is unchanged by these ops
  }
  return std::nullopt;
}

std::optional<ConstantData> GetConstant(const onnx::TensorProto& tensor) {
  return FromTensor(Tensor::FromProto(tensor), /*borrow=*/false);
}

std::optional<ConstantData> GetConstant(const Value* value) {
  if (!value) return std::nullopt;
  if (value->IsInitializer()) {
    if (value->IsGraphInput()) return std::nullopt;  // overridable at run time
    return FromTensor(*value->initializer(), /*borrow=*/true);
  }
  const Node* n = value->producer();
  if (!n || !n->Is("Constant") || n->num_outputs() != 1) return std::nullopt;
  if (n->attributes().size() != 1) return std::nullopt;
  const Attribute& a = n->attributes().front();
  const auto& p = a.proto();
  if (a.is_ref()) return std::nullopt;  // a function attribute: unknown until inlined
  if (a.name() == "value" && p.has_t()) return GetConstant(p.t());
  if (a.name() == "value_float") return FromList<float>(T::FLOAT, {p.f()}, true);
  if (a.name() == "value_int") return FromList<int64_t>(T::INT64, {p.i()}, true);
  if (a.name() == "value_floats") return FromList<float>(T::FLOAT, {p.floats().begin(), p.floats().end()}, false);
  if (a.name() == "value_ints") return FromList<int64_t>(T::INT64, {p.ints().begin(), p.ints().end()}, false);
  return std::nullopt;
}

std::optional<std::pair<int32_t, std::vector<int64_t>>> GetConstantTypeAndDims(const Value* value) {
  if (!value) return std::nullopt;
  if (value->IsInitializer()) {
    if (value->IsGraphInput()) return std::nullopt;
    const Tensor& t = *value->initializer();
    if (!t.has_raw_bytes() && !t.CanBeRaw()) return std::nullopt;  // as FromTensor: no raw layout
    return std::make_pair(t.meta().data_type(), std::vector<int64_t>(t.meta().dims().begin(), t.meta().dims().end()));
  }
  // A Constant node's attribute is in the node: reading it fetches nothing.
  auto c = GetConstant(value);
  if (!c) return std::nullopt;
  return std::make_pair(c->data_type, c->dims);
}

bool IsFloatOrDouble(int32_t data_type) {
  return data_type == onnx::TensorProto::FLOAT || data_type == onnx::TensorProto::DOUBLE;
}

std::string EncodeFloatOrDouble(const std::vector<double>& values, int32_t data_type) {
  int32_t type = data_type == onnx::TensorProto::DOUBLE ? data_type : onnx::TensorProto::FLOAT;
  StatusOr<Tensor> t = Tensor::FromDoubles(type, {static_cast<int64_t>(values.size())}, values);
  return t.ok() ? std::string(t->raw_bytes()) : std::string();  // (cannot fail: a float type, matching count)
}

}  // namespace onnxsurgeon
