// The watchdog (e2e/runtime/watchdog.hpp) on its own: it ends the job when one step outlasts the timeout, names
// the step, and stays quiet while steps keep finishing or no step is in progress. The MPI tests
// (tests/e2e/CMakeLists.txt, e2e.fault.stopped_rank_*) check it inside the trainer with a stopped rank.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <stdexcept>
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
  ExitingWorld world;
  Watchdog watchdog(world, 0.5);
  const Step step;
  // Many short steps over several timeouts: each one finishes, so none has lasted the timeout.
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  std::int64_t n = 0;
  while (std::chrono::steady_clock::now() < end) {
    const Watchdog::Scope watched(&watchdog, step, n++);
  }
  // No step in progress for several timeouts (a rank computing, or between phases): not a wait.
  sleep_s(1.5);
  EXPECT_GT(n, 0);  // still alive: a timeout would have ended the process
}

TEST(Watchdog, ZeroTimeoutNeverFires) {
  ExitingWorld world;
  Watchdog watchdog(world, 0);
  const Step step;
  watchdog.enter(step);
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
// was not waiting while it was stopped: its watchdog must not blame the stop on the step. The step runs 0.6 s
// first (the watchdog, looking every 0.375 s, has seen it begin), then the process stops itself, and a child it
// forked resumes it only after the stop has lasted 5 s, past the 3 s timeout (it watches /proc for the parent's
// state "T, stopped"). After the resume the step lasts 0.2 s more and ends: 0.8 s of running in a step of 3 s
// allowed. Before the fix the watchdog fired on its first look after the resume.
TEST(WatchdogDeathTest, AStopAndResumeIsNotCountedAsWaiting) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ExitingWorld world;
        Watchdog watchdog(world, 3.0);
        const Step step;
        watchdog.enter(step, 3);
        sleep_s(0.6);
        const pid_t self = ::getpid();
        const pid_t resumer = ::fork();
        if (resumer == 0) {
          while (!stopped(self)) sleep_s(0.01);
          sleep_s(5);
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
