#include "core/io/wire.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

namespace onnxsurgeon::wire {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  bool done() const { return p_ >= end_; }
  const char* pos() const { return p_; }

  bool Varint(uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      uint8_t b = static_cast<uint8_t>(*p_++);
      value |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }

  // Reads one field; for LEN fields `payload` is its body, for VARINT fields `varint` its value.
  bool Field(int& number, int& wire_type, std::string_view& payload, uint64_t* varint = nullptr) {
    uint64_t tag;
    if (!Varint(tag)) return false;
    number = static_cast<int>(tag >> 3);
    wire_type = static_cast<int>(tag & 7);
    if (number == 0) return false;
    switch (wire_type) {
      case 0: {
        uint64_t ignored;
        return Varint(varint ? *varint : ignored);
      }
      case 1: return Skip(8);
      case 5: return Skip(4);
      case 2: {
        uint64_t len;
        if (!Varint(len) || len > static_cast<uint64_t>(end_ - p_)) return false;
        payload = std::string_view(p_, len);
        p_ += len;
        return true;
      }
      default: return false;  // groups (3/4) are not used by onnx.proto; anything else is corrupt
    }
  }

 private:
  bool Skip(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    p_ += n;
    return true;
  }
  const char* p_;
  const char* end_;
};

Status Corrupt(std::string_view what) {
  return absl::DataLossError(
      absl::StrCat("not a valid ONNX model: truncated or corrupt protobuf (", std::string(what), ")"));
}

// Copies a LEN field with a new body.
void AppendLenField(std::string& out, int field, std::string_view body) {
  AppendTag(out, field, kWireLen);
  AppendVarint(out, body.size());
  out.append(body);
}

Status StripTensor(std::string_view tensor, std::string& out, std::optional<std::string_view>& raw) {
  Reader r(tensor);
  while (!r.done()) {
    const char* start = r.pos();
    int number, wire_type;
    std::string_view payload;
    if (!r.Field(number, wire_type, payload)) return Corrupt("initializer tensor");
    if (number == kTensorRawData && wire_type == kWireLen) {
      raw = payload;  // last one wins, as in protobuf
    } else {
      out.append(start, r.pos() - start);
    }
  }
  return absl::OkStatus();
}

Status StripGraph(std::string_view graph, std::string& out, StrippedModel& result) {
  Reader r(graph);
  std::string tensor;
  while (!r.done()) {
    const char* start = r.pos();
    int number, wire_type;
    std::string_view payload;
    if (!r.Field(number, wire_type, payload)) return Corrupt("graph");
    if (number == kGraphInitializer && wire_type == kWireLen) {
      tensor.clear();
      std::optional<std::string_view> raw;
      OS_RETURN_IF_ERROR(StripTensor(payload, tensor, raw));
      AppendLenField(out, number, tensor);
      result.raw_data.push_back(raw);
    } else {
      out.append(start, r.pos() - start);
    }
  }
  return absl::OkStatus();
}

// The messages of onnx.proto, as far as a walk over nested messages needs them.
enum class Kind {
  kNone,  // not a message (or one whose fields hold no further messages of interest)
  kLeaf,  // a message without message fields: counts one level
  kModel,
  kGraph,
  kNode,
  kAttribute,
  kFunction,
  kTrainingInfo,
  kTensor,
  kSparseTensor,
  kTensorAnnotation,
  kValueInfo,
  kType,
  kTypeTensor,
  kTypeElem,
  kTypeMap,
  kShape,
  kStringEntry,
};

// The message kind of field `field` of a `parent` message (onnx.proto's field numbers).
Kind ChildKind(Kind parent, int field) {
  switch (parent) {
    case Kind::kModel:
      switch (field) {
        case 7: return Kind::kGraph;          // graph
        case 20: return Kind::kTrainingInfo;  // training_info
        case 25: return Kind::kFunction;      // functions
        case 8:
        case 14:
        case 26: return Kind::kLeaf;  // opset_import, metadata_props, configuration
      }
      break;
    case Kind::kTrainingInfo:
      if (field == 1 || field == 2) return Kind::kGraph;  // initialization, algorithm
      if (field == 3 || field == 4) return Kind::kLeaf;
      break;
    case Kind::kGraph:
      switch (field) {
        case 1: return Kind::kNode;           // node
        case 5: return Kind::kTensor;         // initializer
        case 15: return Kind::kSparseTensor;  // sparse_initializer
        case 11:
        case 12:
        case 13: return Kind::kValueInfo;         // input, output, value_info
        case 14: return Kind::kTensorAnnotation;  // quantization_annotation
        case 16: return Kind::kLeaf;              // metadata_props
      }
      break;
    case Kind::kNode:
      if (field == 5) return Kind::kAttribute;
      if (field == 9 || field == 10) return Kind::kLeaf;  // metadata_props, device_configurations
      break;
    case Kind::kFunction:
      if (field == 7) return Kind::kNode;
      if (field == 11) return Kind::kAttribute;  // attribute_proto
      if (field == 12) return Kind::kValueInfo;
      if (field == 9 || field == 14) return Kind::kLeaf;
      break;
    case Kind::kAttribute:
      switch (field) {
        case 5:
        case 10: return Kind::kTensor;  // t, tensors
        case 6:
        case 11: return Kind::kGraph;  // g, graphs
        case 22:
        case 23: return Kind::kSparseTensor;  // sparse_tensor, sparse_tensors
        case 14:
        case 15: return Kind::kType;  // tp, type_protos
      }
      break;
    case Kind::kSparseTensor:
      if (field == 1 || field == 2) return Kind::kTensor;  // values, indices
      break;
    case Kind::kTensor:
      if (field == 13) return Kind::kStringEntry;         // external_data
      if (field == 3 || field == 16) return Kind::kLeaf;  // segment, metadata_props
      break;
    case Kind::kTensorAnnotation:
      if (field == 2) return Kind::kLeaf;
      break;
    case Kind::kValueInfo:
      if (field == 2) return Kind::kType;
      if (field == 4) return Kind::kLeaf;
      break;
    case Kind::kType:
      switch (field) {
        case 1:
        case 8: return Kind::kTypeTensor;  // tensor_type, sparse_tensor_type
        case 4:
        case 9: return Kind::kTypeElem;  // sequence_type, optional_type
        case 5: return Kind::kTypeMap;   // map_type
      }
      break;
    case Kind::kTypeTensor:
      if (field == 2) return Kind::kShape;
      break;
    case Kind::kTypeElem:
      if (field == 1) return Kind::kType;  // elem_type
      break;
    case Kind::kTypeMap:
      if (field == 2) return Kind::kType;  // value_type
      break;
    case Kind::kShape:
      if (field == 1) return Kind::kLeaf;  // dim
      break;
    default: break;
  }
  return Kind::kNone;
}

// Visits every message of a serialized message of kind `kind`, depth first; `visit(kind,
// body, level, graphs)` returns false to skip the message's children. False for a field
// that does not parse.
template <typename Visit>
bool WalkMessages(Kind kind, std::string_view body, int level, int graphs, int max_level, Visit& visit) {
  if (kind == Kind::kGraph) ++graphs;
  if (!visit(kind, body, level, graphs) || level >= max_level) return true;
  Reader r(body);
  while (!r.done()) {
    int number, wire_type;
    std::string_view payload;
    if (!r.Field(number, wire_type, payload)) return false;
    if (wire_type != kWireLen) continue;
    Kind child = ChildKind(kind, number);
    if (child == Kind::kNone) continue;
    if (!WalkMessages(child, payload, level + 1, graphs, max_level, visit)) return false;
  }
  return true;
}

}  // namespace

Nesting MeasureNesting(std::string_view model, int max_level) {
  Nesting n;
  auto visit = [&](Kind, std::string_view, int level, int graphs) {
    n.messages = std::max(n.messages, level);
    n.graphs = std::max(n.graphs, graphs);
    return true;
  };
  n.corrupt = !WalkMessages(Kind::kModel, model, 0, 0, max_level, visit);
  return n;
}

StatusOr<std::vector<std::string>> ExternalDataLocations(std::string_view model) {
  std::vector<std::string> out;
  absl::flat_hash_set<std::string_view> seen;
  bool corrupt = false;
  auto visit = [&](Kind kind, std::string_view body, int, int) {
    if (kind != Kind::kTensor) return kind != Kind::kTypeTensor && kind != Kind::kType;  // types hold no tensors
    bool external = false;
    std::vector<std::string_view> locations;
    Reader r(body);
    while (!r.done()) {
      int number, wire_type;
      std::string_view payload;
      uint64_t value = 0;
      if (!r.Field(number, wire_type, payload, &value)) {
        corrupt = true;
        return false;
      }
      if (number == 14 && wire_type == 0) external = value == 1;  // data_location: EXTERNAL (last one wins)
      if (number != 13 || wire_type != kWireLen) continue;        // external_data
      std::string_view key, entry_value;
      Reader entry(payload);
      while (!entry.done()) {
        int n, wt;
        std::string_view p;
        if (!entry.Field(n, wt, p)) {
          corrupt = true;
          return false;
        }
        if (wt == kWireLen && n == 1) key = p;
        if (wt == kWireLen && n == 2) entry_value = p;
      }
      if (key == "location") locations.push_back(entry_value);
    }
    if (external)
      for (std::string_view l : locations)
        if (seen.insert(l).second) out.emplace_back(l);
    return false;  // a tensor's own fields are read above
  };
  // Deeper than protobuf's parser goes, the model does not load anyway; the bound keeps
  // the recursion short on hostile input.
  constexpr int kProtobufDepthLimit = 100;
  if (!WalkMessages(Kind::kModel, model, 0, 0, kProtobufDepthLimit, visit) || corrupt) return Corrupt("model");
  return out;
}

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void AppendTag(std::string& out, int field, int wire_type) {
  AppendVarint(out, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

size_t VarintSize(uint64_t value) {
  size_t n = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++n;
  }
  return n;
}

StatusOr<StrippedModel> StripInitializerPayloads(std::string_view bytes) {
  StrippedModel result;
  Reader r(bytes);
  std::string graph;
  while (!r.done()) {
    const char* start = r.pos();
    int number, wire_type;
    std::string_view payload;
    if (!r.Field(number, wire_type, payload)) return Corrupt("model");
    if (number == kModelGraph && wire_type == kWireLen) {
      graph.clear();
      OS_RETURN_IF_ERROR(StripGraph(payload, graph, result));
      AppendLenField(result.remainder, number, graph);
    } else {
      result.remainder.append(start, r.pos() - start);
    }
  }
  return result;
}

}  // namespace onnxsurgeon::wire
