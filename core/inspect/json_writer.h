// A minimal streaming JSON writer (objects, arrays, strings, numbers, booleans) for
// reports. Keys and strings are escaped per RFC 8259; bytes that are not UTF-8 become
// U+FFFD, so the output always parses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace onnxsurgeon {

class JsonWriter {
 public:
  JsonWriter& BeginObject() { Prefix(); out_ += '{'; first_.push_back(true); return *this; }
  JsonWriter& EndObject() { out_ += '}'; first_.pop_back(); return *this; }
  JsonWriter& BeginArray() { Prefix(); out_ += '['; first_.push_back(true); return *this; }
  JsonWriter& EndArray() { out_ += ']'; first_.pop_back(); return *this; }
  JsonWriter& Key(std::string_view k) { Prefix(); String(k); out_ += ':'; after_key_ = true; return *this; }
  JsonWriter& Value(std::string_view s) { Prefix(); String(s); return *this; }
  JsonWriter& Value(const char* s) { return Value(std::string_view(s)); }
  JsonWriter& Value(int64_t v) { Prefix(); out_ += std::to_string(v); return *this; }
  JsonWriter& Value(uint64_t v) { Prefix(); out_ += std::to_string(v); return *this; }
  JsonWriter& Value(int v) { return Value(static_cast<int64_t>(v)); }
  JsonWriter& Value(size_t v, int) { return Value(static_cast<uint64_t>(v)); }
  JsonWriter& Value(double v);
  JsonWriter& Bool(bool v) { Prefix(); out_ += v ? "true" : "false"; return *this; }
  JsonWriter& Null() { Prefix(); out_ += "null"; return *this; }
  const std::string& str() const { return out_; }

 private:
  void Prefix() {
    if (after_key_) { after_key_ = false; return; }
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
  }
  void String(std::string_view s);
  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace onnxsurgeon
