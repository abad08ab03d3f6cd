#pragma once
// The watchdog for a stuck job. A rank that is stopped (SIGSTOP), hung, or waiting for a message its peer will
// never send blocks its peers inside a point-to-point call or a collective forever, and MPI itself never says so.
// The main thread marks each blocking step (a communication action of the program, a collective of the driver)
// with enter() and leave(); a watchdog thread wakes a few times per timeout, and when one step has been in
// progress for longer than the timeout it prints
//   zeropp-train: rank 1: timed out after 5 s waiting in RECV_F stage 1 micro-batch 3 (from rank 0) at step 0
// and ends the whole job (Communicator::abort -> MPI_Abort) with kTimeoutExitCode. The stopped rank cannot
// report itself: its peers, waiting on it, do.
//
// The hot path is a few plain atomic stores per step (no clock read, no lock, no read-modify-write: about 1 ns
// per step on the development VM, where a null-backend action takes some 30 us): the watchdog thread sees a step
// by its sequence number and times it from when it first saw it, so a timeout fires between `timeout` and
// `timeout` + one poll interval after the step began. What the step was is rendered only when it fires. Time in
// which the process was not running at all (stopped by SIGSTOP and resumed, the machine suspended) shows as a
// gap between two of the watchdog's looks and is not counted as waiting: a stopped rank that mpirun resumes does
// not blame its own stop on the step it was in.
//
// MPI_Abort is called from the watchdog thread while the main thread is blocked inside MPI. The job keeps
// MPI_THREAD_SINGLE (asking for MPI_THREAD_MULTIPLE would put locks on every call of the normal path), which
// strictly allows MPI calls from one thread only; Open MPI's abort ends the job from the second thread all the
// same (e2e.fault.stopped_rank_* test it), and should it ever return, abort_job ends the process (std::abort),
// which the launcher turns into the end of the job.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "e2e/comm/communicator.hpp"

namespace zeropp::e2e {

inline constexpr int kTimeoutExitCode = 4;

// Something a rank can wait in; says in words what it waits on (rendered only when a timeout fires, on the
// watchdog thread, so it must only read state that does not change while the main thread is blocked).
class WaitSite {
 public:
  virtual std::string describe(std::int64_t detail) const = 0;

 protected:
  ~WaitSite() = default;
};

// A fixed label ("the barrier before step 0") as a WaitSite.
class NamedWait final : public WaitSite {
 public:
  explicit NamedWait(std::string label) : label_(std::move(label)) {}
  std::string describe(std::int64_t) const override { return label_; }

 private:
  std::string label_;
};

class Watchdog {
 public:
  // Seconds on a monotonic clock. The watchdog thread wakes on the real clock, but measures how long a step has
  // lasted on this one, so that tests can move time by hand: whether a timeout fires then depends on what the
  // test did, not on how the machine scheduled the threads (tests/e2e/unit_watchdog.cpp).
  using Clock = std::function<double()>;
  static double steady_seconds();

  // `timeout_s` <= 0: no thread, enter()/leave() only store. On a timeout: a message naming world.rank(), then
  // world.abort(kTimeoutExitCode).
  Watchdog(Communicator& world, double timeout_s, Clock clock = steady_seconds);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  double timeout_s() const { return timeout_s_; }

  // One blocking step begins / ends. `site` and `detail` say what it is; `site` must outlive the step.
  // Called by one thread only (the rank's main thread), so a plain store advances the sequence.
  void enter(const WaitSite& site, std::int64_t detail = 0) noexcept {
    site_.store(&site, std::memory_order_relaxed);
    detail_.store(detail, std::memory_order_relaxed);
    advance();  // odd: a step in progress
  }
  void leave() noexcept { advance(); }  // even: none

  // enter() ... leave() over a scope.
  class Scope {
   public:
    Scope(Watchdog* w, const WaitSite& site, std::int64_t detail = 0) : w_(w) {
      if (w_) w_->enter(site, detail);
    }
    ~Scope() {
      if (w_) w_->leave();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Watchdog* w_;
  };

 private:
  void advance() noexcept { sequence_.store(sequence_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
  void watch();
  [[noreturn]] void fire(const std::string& what);

  Communicator& world_;
  double timeout_s_;
  Clock clock_;
  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<const WaitSite*> site_{nullptr};
  std::atomic<std::int64_t> detail_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace zeropp::e2e
