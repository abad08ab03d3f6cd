// The watchdog (e2e/runtime/watchdog.hpp) on its own: it ends the job when one step outlasts the timeout, names
// the step, and stays quiet while steps keep finishing or no step is in progress. Whether it fires must not
// depend on how a loaded machine schedules the threads: the tests that expect it NOT to fire move its clock by
// hand (ManualClock); a test that expects it to fire may run on the real clock, where load can only delay it. The MPI tests
// (tests/e2e/CMakeLists.txt, e2e.fault.stopped_rank_*) check it inside the trainer with a stopped rank.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/runtime/watchdog.hpp"

namespace zeropp::e2e {
namespace {

// A world of one whose abort exits the process with the code (MPI is not initialised in the unit tests).
class ExitingWorld final : public Communicator {
 public:
  const std::string& group() const override { return name_; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void send(const void*, std::size_t, DataType, int, int) override { unused(); }
  void recv(void*, std::size_t, DataType, int, int) override { unused(); }
  void flush() override {}
  void all_reduce(void*, std::size_t, DataType) override { unused(); }
  void all_gather(const void*, void*, std::size_t, DataType) override { unused(); }
  void reduce_scatter(const void*, void*, std::size_t, DataType) override { unused(); }
  void barrier() override {}
  std::unique_ptr<Communicator> split(int, int, const std::string&) override { unused(); }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }

 private:
  [[noreturn]] static void unused() { throw std::logic_error("not used by the watchdog"); }
  std::string name_ = "world";
};

class Step final : public WaitSite {
 public:
  std::string describe(std::int64_t detail) const override { return "test step " + std::to_string(detail); }
};

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// A clock that moves only when the test moves it.
class ManualClock {
 public:
  void advance(double s) { now_.store(now_.load() + s); }
  double now() const { return now_.load(); }
  Watchdog::Clock reader() {
    return [this] { return now_.load(); };
  }

 private:
  std::atomic<double> now_{1000.0};
};

TEST(WatchdogDeathTest, AStepLongerThanTheTimeoutEndsTheJobNamingIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ExitingWorld world;
        Watchdog watchdog(world, 0.2);
        const Step step;
        watchdog.enter(step, 7);
        sleep_s(30);  // the watchdog must end the process long before this returns
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(kTimeoutExitCode),
      "zeropp-train: rank 0: timed out after 0.2 s waiting in test step 7");
}

TEST(Watchdog, StepsThatFinishAndIdleTimeDoNotFire) {
  // On a clock moved by hand, so that the outcome cannot depend on scheduling: on the real clock a loaded machine
  // may deschedule this thread inside a step for longer than the timeout, which is a timeout by definition.
  ExitingWorld world;
  ManualClock clock;
  Watchdog watchdog(world, 0.5, clock.reader());
  const Step step;
  // Many short steps over several timeouts of watched time (each 0.1 s on the watchdog's clock), while the
  // watchdog thread looks many times (it polls every 62.5 ms of real time): each step finishes, so none has
  // lasted the timeout.
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  std::int64_t n = 0;
  while (std::chrono::steady_clock::now() < end) {
    const Watchdog::Scope watched(&watchdog, step, n++);
    clock.advance(0.1);
    sleep_s(0.001);
  }
  // No step in progress for many timeouts (a rank computing, or between phases): not a wait.
  for (int i = 0; i < 20; ++i) {
    clock.advance(0.5);
    sleep_s(0.02);
  }
  EXPECT_GT(n, 0);  // still alive: a timeout would have ended the process
  EXPECT_GT(clock.now(), 3 * 0.5);
}

// The same rule on the hand-moved clock ends the job: a step that stays in progress while its clock passes the
// timeout fires however slowly the threads are scheduled (only later, never not at all).
TEST(WatchdogDeathTest, AStepThatOutlastsTheTimeoutOnItsClockEndsTheJob) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ExitingWorld world;
        ManualClock clock;
        Watchdog watchdog(world, 0.5, clock.reader());
        const Step step;
        watchdog.enter(step, 3);
        for (int i = 0; i < 3000; ++i) {  // 30 s of real time at most; the watchdog fires after ~0.1 s of it
          clock.advance(0.1);
          sleep_s(0.01);
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(kTimeoutExitCode), "zeropp-train: rank 0: timed out after 0.5 s waiting in test step 3");
}

TEST(Watchdog, ZeroTimeoutNeverFires) {
  ExitingWorld world;
  ManualClock clock;
  Watchdog watchdog(world, 0, clock.reader());
  const Step step;
  watchdog.enter(step);
  clock.advance(1e6);  // a step "in progress" for days on its clock: no thread watches it
  sleep_s(0.2);
  watchdog.leave();
  EXPECT_EQ(watchdog.timeout_s(), 0);
}

// Whether process `pid` is stopped: state T in /proc/<pid>/stat (proc(5): "pid (comm) state ...").
bool stopped(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'T';
}

// A rank stopped inside a step (SIGSTOP) for longer than the timeout and then resumed (SIGCONT, as mpirun does)
// was not waiting while it was stopped: its watchdog must not blame the stop on the step. On the hand-moved
// clock, kept in memory shared with a child the process forks, so that the outcome cannot depend on scheduling:
// the step begins, and after 0.6 s of real time (the watchdog, looking every 0.375 s, has seen it: were it not
// yet, the test could not fail, never the other way round) the process stops itself. The child waits until it
// is stopped (/proc state "T"), moves the clock 5 s on (past the 3 s timeout: the time that passes during the
// stop), waits 1.5 s of real time so the watchdog's next look comes late, and resumes it. The step then ends
// without the clock moving again. Before the fix the watchdog fired on its first look after the resume.
TEST(WatchdogDeathTest, AStopAndResumeIsNotCountedAsWaiting) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        void* shared = ::mmap(nullptr, sizeof(ManualClock), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (shared == MAP_FAILED) std::_Exit(10);
        ManualClock* clock = new (shared) ManualClock;  // std::atomic<double> is lock-free: shared across processes
        ExitingWorld world;
        Watchdog watchdog(world, 3.0, clock->reader());
        const Step step;
        watchdog.enter(step, 3);
        sleep_s(0.6);
        const pid_t self = ::getpid();
        const pid_t resumer = ::fork();
        if (resumer == 0) {
          while (!stopped(self)) sleep_s(0.01);
          clock->advance(5.0);
          sleep_s(1.5);
          ::kill(self, SIGCONT);
          std::_Exit(0);
        }
        ::raise(SIGSTOP);
        sleep_s(0.2);
        watchdog.leave();
        ::waitpid(resumer, nullptr, 0);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace zeropp::e2e
