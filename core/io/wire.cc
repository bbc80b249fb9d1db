#include "core/io/wire.h"

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

  // Reads one field; for LEN fields `payload` is its body.
  bool Field(int& number, int& wire_type, std::string_view& payload) {
    uint64_t tag;
    if (!Varint(tag)) return false;
    number = static_cast<int>(tag >> 3);
    wire_type = static_cast<int>(tag & 7);
    if (number == 0) return false;
    switch (wire_type) {
      case 0: {
        uint64_t ignored;
        return Varint(ignored);
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
      default:
        return false;  // groups (3/4) are not used by onnx.proto; anything else is corrupt
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
  return absl::DataLossError(absl::StrCat("not a valid ONNX model: truncated or corrupt protobuf (", std::string(what), ")"));
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

}  // namespace

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
