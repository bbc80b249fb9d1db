#include "core/ir/attribute.h"

#include "core/ir/graph.h"

namespace onnxsurgeon {

Attribute::Attribute(onnx::AttributeProto proto) : proto_(std::move(proto)) {}
Attribute::Attribute(Attribute&&) noexcept = default;
Attribute& Attribute::operator=(Attribute&&) noexcept = default;
Attribute::~Attribute() = default;

int64_t Attribute::i(int64_t fallback) const {
  return proto_.type() == onnx::AttributeProto::INT ? proto_.i() : fallback;
}

float Attribute::f(float fallback) const {
  return proto_.type() == onnx::AttributeProto::FLOAT ? proto_.f() : fallback;
}

}  // namespace onnxsurgeon
