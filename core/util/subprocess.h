// Running a helper program (python for --check, graphviz dot for reports) with its
// stdin, stdout and stderr on files: no pipes, so no deadlock on large outputs.
#pragma once

#include <string>
#include <vector>

namespace onnxsurgeon {

// Given argv (argv[0] looked up on PATH) and file paths (stdin_path empty: /dev/null).
// Result the exit status (128 + signal when killed), or -1 when it could not start.
int RunProgram(const std::vector<std::string>& argv, const std::string& stdin_path, const std::string& stdout_path,
               const std::string& stderr_path);

// Is `program` an executable on PATH (or a path to one)?
bool ProgramExists(const std::string& program);

std::string ReadWholeFile(const std::string& path);

// A temporary folder, removed with everything in it when this goes out of scope.
class TempDir {
 public:
  // Empty path() when it could not be created.
  explicit TempDir(const std::string& prefix);
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir(const TempDir&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace onnxsurgeon
