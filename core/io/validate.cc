#include "core/io/validate.h"

#include <functional>
#include <set>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/domains.h"
#include "core/ir/dtypes.h"
#include "onnx/defs/schema.h"

namespace onnxsurgeon {
namespace {

using T = onnx::TensorProto;

// absl::StrCat in this abseil takes no std::string_view: concatenate piece by piece.
std::string Piece(std::string_view s) { return std::string(s); }
template <typename N, typename = std::enable_if_t<std::is_arithmetic_v<N>>>
std::string Piece(N n) {
  return std::to_string(n);
}
template <typename... A>
std::string Cat(const A&... a) {
  std::string out;
  ((out += Piece(a)), ...);
  return out;
}
template <typename... A>
Status Invalid(const A&... a) {
  return absl::InvalidArgumentError(Cat(a...));
}

// Bits one element takes in raw_data; 0 for types without a raw layout (STRING) or unknown.
int BitsPerElement(int32_t type) {
  switch (type) {
    case T::UINT2:
    case T::INT2: return 2;
    case T::UINT4:
    case T::INT4:
    case T::FLOAT4E2M1: return 4;
    case T::FLOAT6E2M3:
    case T::FLOAT6E3M2: return 6;
    case T::UINT8:
    case T::INT8:
    case T::BOOL:
    case T::FLOAT8E4M3FN:
    case T::FLOAT8E4M3FNUZ:
    case T::FLOAT8E5M2:
    case T::FLOAT8E5M2FNUZ:
    case T::FLOAT8E8M0: return 8;
    case T::UINT16:
    case T::INT16:
    case T::FLOAT16:
    case T::BFLOAT16: return 16;
    case T::FLOAT:
    case T::INT32:
    case T::UINT32: return 32;
    case T::DOUBLE:
    case T::INT64:
    case T::UINT64:
    case T::COMPLEX64: return 64;
    case T::COMPLEX128: return 128;
    default: return 0;
  }
}

// How many entries of the typed field that holds `type` make `n` elements, and which field.
std::pair<uint64_t, int> TypedCount(int32_t type, uint64_t n) {
  enum { kFloat = 4, kInt32 = 5, kString = 6, kInt64 = 7, kDouble = 10, kUint64 = 11 };
  switch (type) {
    case T::FLOAT: return {n, kFloat};
    case T::COMPLEX64: return {2 * n, kFloat};
    case T::DOUBLE: return {n, kDouble};
    case T::COMPLEX128: return {2 * n, kDouble};
    case T::INT64: return {n, kInt64};
    case T::UINT32:
    case T::UINT64: return {n, kUint64};
    case T::STRING: return {n, kString};
    case T::UINT4:
    case T::INT4:
    case T::FLOAT4E2M1: return {(n + 1) / 2, kInt32};
    case T::UINT2:
    case T::INT2: return {(n + 3) / 4, kInt32};
    default: return {n, kInt32};
  }
}

uint64_t FieldCount(const T& t, int field) {
  switch (field) {
    case 4: return t.float_data_size();
    case 5: return t.int32_data_size();
    case 6: return t.string_data_size();
    case 7: return t.int64_data_size();
    case 10: return t.double_data_size();
    case 11: return t.uint64_data_size();
  }
  return 0;
}

std::string NodeLabel(const onnx::NodeProto& n, int index) {
  std::string op = QualifiedOpName(n.domain(), n.op_type());
  return n.name().empty() ? Cat("node #", index, " (", op, ")") : Cat("node '", n.name(), "' (", op, ")");
}

class Validator {
 public:
  explicit Validator(const onnx::ModelProto& model) : model_(model) {
    for (const auto& f : model.functions())
      local_functions_.insert({std::string(CanonicalDomain(f.domain())), f.name()});
  }

  Status Run(const std::vector<std::optional<uint64_t>>* main_raw) {
    const auto& m = model_;
    if (!m.has_ir_version() || m.ir_version() < 1) {
      return Invalid("ir_version ", m.has_ir_version() ? std::to_string(m.ir_version()) : "missing",
                     " is not a valid ONNX IR version (1..", std::to_string(onnx::IR_VERSION), ")");
    }
    if (m.ir_version() > onnx::IR_VERSION) {
      return Invalid("ir_version ", std::to_string(m.ir_version()), " is newer than this build of onnx supports (",
                     std::to_string(onnx::IR_VERSION), ")");
    }
    if (!m.has_graph()) return Invalid("the model has no graph");
    OS_ASSIGN_OR_RETURN(auto opsets, Opsets(m.opset_import(), "the model"));
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (const auto& f : m.functions()) {
      std::string where = Cat("function '", f.domain(), "::", f.name(), "'");
      if (!seen.insert({std::string(CanonicalDomain(f.domain())), f.name(), f.overload()}).second) {
        return Invalid(where, f.overload().empty() ? "" : Cat(" (overload '", f.overload(), "')"), " is defined twice");
      }
      auto fn_opsets = opsets;  // a body may use the model's imports it does not repeat
      if (f.opset_import_size() > 0) {
        OS_ASSIGN_OR_RETURN(auto own, Opsets(f.opset_import(), where));
        for (auto& [d, v] : own) fn_opsets[d] = v;
      }
      OS_RETURN_IF_ERROR(Outputs(f.output(), where));
      OS_RETURN_IF_ERROR(Nodes(f.node(), fn_opsets, where));
    }
    const onnx::GraphProto& g = m.graph();
    if (g.output_size() == 0) return Invalid("main graph '", g.name(), "' declares no outputs");
    return Graph(g, opsets, Cat("main graph '", g.name(), "'"), main_raw, /*main=*/true);
  }

 private:
  using OpsetMap = absl::flat_hash_map<std::string, int64_t>;

  StatusOr<OpsetMap> Opsets(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                            const std::string& where) {
    if (imports.empty()) return Invalid(where, " imports no opset (opset_import is empty)");
    const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    OpsetMap out;
    for (const auto& imp : imports) {
      std::string domain(CanonicalDomain(imp.domain()));
      std::string shown = domain.empty() ? "ai.onnx" : domain;
      // Repeated imports that agree are accepted, as onnx's checker and onnxruntime do
      // (skl2onnx writes them); the importer keeps one. Ones that disagree are ambiguous.
      if (auto [it, added] = out.emplace(domain, imp.version()); !added) {
        if (it->second == imp.version()) continue;
        return Invalid(where, " imports domain '", shown, "' twice, as opset ", std::to_string(it->second), " and ",
                       std::to_string(imp.version()));
      }
      auto range = known.find(domain);
      if (range != known.end()) {
        if (imp.version() < 1 || imp.version() > range->second.second) {
          return Invalid(where, " imports opset ", std::to_string(imp.version()), " of '", shown,
                         Cat("', which onnx does not define (1..", range->second.second, ")"));
        }
      } else if (imp.version() < 0) {
        return Invalid(where, " imports a negative opset version for domain '", shown, "'");
      }
    }
    return out;
  }

  Status Outputs(const google::protobuf::RepeatedPtrField<std::string>& names, const std::string& where) {
    absl::flat_hash_set<std::string_view> seen;
    for (const std::string& n : names)
      if (!seen.insert(n).second) return Invalid(where, " lists output '", n, "' twice");
    return absl::OkStatus();
  }

  // `main`: the model's graph, whose outputs a caller fetches by name, so two of one name
  // are ambiguous. A subgraph's outputs bind by position (If, Loop, Scan), and one value
  // listed twice is meaningful (onnx's checker and onnxruntime accept it; the importer
  // gives the second listing an Identity of its own).
  Status Graph(const onnx::GraphProto& g, const OpsetMap& opsets, const std::string& where,
               const std::vector<std::optional<uint64_t>>* raw, bool main = false) {
    absl::flat_hash_set<std::string_view> outputs;
    for (const auto& o : g.output())
      if (main && !outputs.insert(o.name()).second) return Invalid(where, " lists output '", o.name(), "' twice");
    for (int i = 0; i < g.initializer_size(); ++i) {
      const T& t = g.initializer(i);
      std::optional<uint64_t> bytes;
      if (raw && static_cast<size_t>(i) < raw->size()) bytes = (*raw)[i];
      OS_RETURN_IF_ERROR(ValidateTensorData(t, bytes, Cat(where, ": initializer '", t.name(), "'")));
    }
    for (const auto& s : g.sparse_initializer()) {
      std::string name = Cat(where, ": sparse initializer '", s.values().name(), "'");
      OS_RETURN_IF_ERROR(ValidateTensorData(s.values(), std::nullopt, name + " values"));
      OS_RETURN_IF_ERROR(ValidateTensorData(s.indices(), std::nullopt, name + " indices"));
      for (int64_t d : s.dims())
        if (d < 0) return Invalid(name, " has a negative dimension");
    }
    return Nodes(g.node(), opsets, where);
  }

  Status Nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const OpsetMap& opsets,
               const std::string& where) {
    for (int i = 0; i < nodes.size(); ++i) {
      const onnx::NodeProto& n = nodes[i];
      if (n.op_type().empty()) return Invalid(where, ": ", NodeLabel(n, i), " has no op_type");
      std::string domain(CanonicalDomain(n.domain()));
      auto imported = opsets.find(domain);
      if (imported == opsets.end()) {
        return Invalid(where, ": ", NodeLabel(n, i), " uses domain '", domain.empty() ? "ai.onnx" : domain,
                       "', which the model does not import (opset_import)");
      }
      if (!local_functions_.count({domain, n.op_type()})) OS_RETURN_IF_ERROR(Arity(n, i, imported->second, where));
      for (const auto& a : n.attribute()) {
        std::string at = Cat(where, ": ", NodeLabel(n, i), " attribute '", a.name(), "'");
        if (a.has_t()) OS_RETURN_IF_ERROR(ValidateTensorData(a.t(), std::nullopt, at));
        for (const T& t : a.tensors()) OS_RETURN_IF_ERROR(ValidateTensorData(t, std::nullopt, at));
        if (a.has_sparse_tensor()) {
          OS_RETURN_IF_ERROR(ValidateTensorData(a.sparse_tensor().values(), std::nullopt, at));
          OS_RETURN_IF_ERROR(ValidateTensorData(a.sparse_tensor().indices(), std::nullopt, at));
        }
        auto sub_where = [&](const onnx::GraphProto& sub) {
          return Cat("subgraph '", sub.name(), "' of ", NodeLabel(n, i), " in ", where);
        };
        if (a.has_g()) OS_RETURN_IF_ERROR(Graph(a.g(), opsets, sub_where(a.g()), nullptr));
        for (const auto& sub : a.graphs()) OS_RETURN_IF_ERROR(Graph(sub, opsets, sub_where(sub), nullptr));
      }
    }
    return absl::OkStatus();
  }

  // The input/output counts onnx's schema allows (CheckOperandCount).
  Status Arity(const onnx::NodeProto& n, int index, int64_t opset, const std::string& where) {
    const onnx::OpSchema* s = Schema(n.op_type(), opset, n.domain());
    if (!s) return absl::OkStatus();  // unknown or custom op: passes treat it as opaque
    Status inputs = CheckOperandCount(*s, "input", n.input_size(), [&](int i) { return n.input(i).empty(); });
    if (!inputs.ok()) return Invalid(where, ": ", NodeLabel(n, index), " ", std::string(inputs.message()));
    Status outputs = CheckOperandCount(*s, "output", n.output_size(), [&](int i) { return n.output(i).empty(); });
    if (!outputs.ok()) return Invalid(where, ": ", NodeLabel(n, index), " ", std::string(outputs.message()));
    return absl::OkStatus();
  }

  const onnx::OpSchema* Schema(const std::string& op, int64_t opset, const std::string& domain) {
    auto key = std::make_tuple(op, std::string(CanonicalDomain(domain)), opset);
    auto it = schemas_.find(key);
    if (it != schemas_.end()) return it->second;
    const onnx::OpSchema* s = opset > std::numeric_limits<int>::max()
                                  ? nullptr
                                  : onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset), std::get<1>(key));
    schemas_.emplace(std::move(key), s);
    return s;
  }

  const onnx::ModelProto& model_;
  std::set<std::pair<std::string, std::string>> local_functions_;
  absl::flat_hash_map<std::tuple<std::string, std::string, int64_t>, const onnx::OpSchema*> schemas_;
};

}  // namespace

Status CheckOperandCount(const onnx::OpSchema& schema, std::string_view kind, int count,
                         absl::FunctionRef<bool(int)> is_empty) {
  const bool inputs = kind == "input";
  const int min = inputs ? schema.min_input() : schema.min_output();
  const int max = inputs ? schema.max_input() : schema.max_output();
  const std::vector<onnx::OpSchema::FormalParameter>& formals = inputs ? schema.inputs() : schema.outputs();
  if (count < min || count > max) {
    std::string range = max == std::numeric_limits<int>::max() ? Cat("at least ", min)
                        : min == max                           ? Cat(min)
                                                               : Cat(min, " to ", max);
    return absl::InvalidArgumentError(
        Cat("has ", count, " ", kind, "s; ", schema.Name(), "-", schema.SinceVersion(), " takes ", range));
  }
  for (int i = 0; i < count && i < static_cast<int>(formals.size()); ++i) {
    if (is_empty(i) && formals[i].GetOption() == onnx::OpSchema::Single)
      return absl::InvalidArgumentError(Cat("leaves required ", kind, " ", i, " ('", formals[i].GetName(), "') empty"));
  }
  return absl::OkStatus();
}

Status ValidateTensorData(const onnx::TensorProto& t, std::optional<uint64_t> payload_bytes, std::string_view where) {
  if (!onnx::TensorProto_DataType_IsValid(t.data_type()) || t.data_type() == T::UNDEFINED) {
    return Invalid(where, " has data type ", std::to_string(t.data_type()), ", which is not a tensor element type");
  }
  // Element count, refusing negative dims and products past 2^62.
  uint64_t n = 1;
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  for (int64_t d : t.dims()) {
    if (d < 0) return Invalid(where, " has a negative dimension (", std::to_string(d), ")");
    if (d != 0 && n > kLimit / static_cast<uint64_t>(d)) return Invalid(where, " has dims whose product overflows");
    n *= static_cast<uint64_t>(d);
  }
  int bits = BitsPerElement(t.data_type());
  bool external = t.data_location() == T::EXTERNAL;
  if (!payload_bytes && t.has_raw_data()) payload_bytes = t.raw_data().size();
  if (payload_bytes) {
    if (t.data_type() == T::STRING) return Invalid(where, " is a STRING tensor with raw data");
    if (bits == 0) return absl::OkStatus();  // a type this build does not size
    uint64_t expected = (n * static_cast<uint64_t>(bits) + 7) / 8;
    if (*payload_bytes != expected) {
      return Invalid(where, Cat(" holds ", *payload_bytes, " bytes of ", external ? "external" : "raw",
                                " data, but its dims and type need ", expected));
    }
    return absl::OkStatus();
  }
  if (external) return absl::OkStatus();  // sized when its file is read
  auto [count, field] = TypedCount(t.data_type(), n);
  uint64_t have = FieldCount(t, field);
  uint64_t total = t.float_data_size() + t.int32_data_size() + t.string_data_size() + t.int64_data_size() +
                   t.double_data_size() + t.uint64_data_size();
  if (total != have) {
    return Invalid(where, " has data type ", DataTypeName(t.data_type()),
                   " but keeps values in a typed field of another type");
  }
  if (have != count) return Invalid(where, " holds ", total, " data values, but its dims and type need ", count);
  return absl::OkStatus();
}

std::optional<uint64_t> ExpectedRawBytes(const onnx::TensorProto& t) {
  int bits = BitsPerElement(t.data_type());
  if (bits == 0) return std::nullopt;
  uint64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d != 0 && n > (uint64_t{1} << 62) / static_cast<uint64_t>(d))) return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return (n * static_cast<uint64_t>(bits) + 7) / 8;
}

Status ValidateModelProto(const onnx::ModelProto& model,
                          const std::vector<std::optional<uint64_t>>* main_initializer_raw_sizes) {
  return Validator(model).Run(main_initializer_raw_sizes);
}

}  // namespace onnxsurgeon
