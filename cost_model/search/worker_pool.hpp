#pragma once
// A fixed set of threads that run one index range at a time: the search's bounding and simulating phases are
// embarrassingly parallel (every plan's bounds and simulation depend on that plan alone), so it hands them out
// here and keeps every decision that depends on other plans on the calling thread, in order (search.hpp).
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace zeropp::search {

// The threads a search uses when its options say 0: every core the system reports (at least 1).
int default_threads();

class WorkerPool {
 public:
  // `threads` >= 1 threads in all: the caller and threads - 1 workers.
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(i) for every i in [0, n), spread over the threads (the caller too), and returns when all are done.
  // fn must be safe to call concurrently for different i. If calls throw, the exception of the smallest i is
  // rethrown here once all have finished (the same one whatever the thread count).
  void run(std::size_t n, const std::function<void(std::size_t)>& fn);

 private:
  void work();   // a worker's loop
  void drain();  // takes indices of the current job until none is left

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t size_ = 0, next_ = 0, finished_ = 0;
  unsigned long long generation_ = 0;
  int busy_ = 0;  // workers inside drain() for the current job
  bool stop_ = false;
  std::size_t error_index_ = 0;
  std::exception_ptr error_;
};

}  // namespace zeropp::search
