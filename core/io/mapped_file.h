// MappedFile: a read-only mmap of a whole file. Tensors loaded from it keep a
// shared_ptr to it, so the mapping lives exactly as long as some tensor needs it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/ir/status.h"

namespace onnxsurgeon {

class MappedFile {
 public:
  static StatusOr<std::shared_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  std::string path_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace onnxsurgeon
