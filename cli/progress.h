// A progress line on stderr for steps that take more than about a second (load, each
// pass, save), only when stderr is a terminal: "  simplify  3.2 s  41,203 nodes visited".
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace onnxsurgeon::cli {

class Progress {
 public:
  // Disabled (every call a no-op) unless `enabled` and stderr is a TTY.
  explicit Progress(bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Begin(const std::string& step);
  void End();
  // Passes add the nodes they visit here (PassContext::nodes_visited).
  std::atomic<int64_t>* nodes_visited() { return &visited_; }

 private:
  void Loop();
  bool enabled_ = false;
  double delay_ = 1.0;  // seconds a step runs before it is shown
  std::atomic<int64_t> visited_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::string step_;  // empty: no step running
  std::chrono::steady_clock::time_point start_;
  bool shown_ = false, stop_ = false;
  std::thread thread_;
};

}  // namespace onnxsurgeon::cli
