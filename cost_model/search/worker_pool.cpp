#include "cost_model/search/worker_pool.hpp"

#include <algorithm>

namespace zeropp::search {

int default_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

WorkerPool::WorkerPool(int threads) {
  for (int i = 1; i < std::max(threads, 1); ++i) workers_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::run(std::size_t n, const std::function<void(std::size_t)>& fn) {
  if (n == 0) return;
  if (workers_.empty()) {
    // One thread: in order, as a plain loop (the first exception is the smallest index's).
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    size_ = n;
    next_ = 0;
    finished_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock<std::mutex> lock(mutex_);
  // Every index finished, and no worker still inside drain() of this job (so `fn` may go out of scope).
  done_.wait(lock, [this] { return finished_ == size_ && busy_ == 0; });
  job_ = nullptr;
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void WorkerPool::drain() {
  while (true) {
    std::size_t i;
    const std::function<void(std::size_t)>* fn;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (job_ == nullptr || next_ >= size_) return;
      i = next_++;
      fn = job_;
    }
    std::exception_ptr failure;
    try {
      (*fn)(i);
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure && (!error_ || i < error_index_)) {
      error_ = failure;
      error_index_ = i;
    }
    if (++finished_ == size_) done_.notify_all();
  }
}

void WorkerPool::work() {
  unsigned long long seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || (generation_ != seen && job_ != nullptr); });
      if (stop_) return;
      seen = generation_;
      ++busy_;
    }
    drain();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_;
    }
    done_.notify_all();
  }
}

}  // namespace zeropp::search
