// write_file_atomically: the whole text or nothing, no temporary left behind, parents created or required; and
// what else a path may name (atomic_file.hpp's rule): links followed, FIFOs, character devices and the process's
// own standard output written in place, sockets refused, an input of the command refused, an empty path refused.
// Every special file here is made by the test in its own folder (a FIFO, a pipe, a pseudo-terminal, a socket,
// links to them): none of the machine's own /dev nodes is written.
#include "cost_model/spec/atomic_file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/input_files.hpp"
#include "cost_model/spec/json_reader.hpp"
#include "tests/spec/scratch_dir.hpp"

namespace zeropp {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AtomicFile, WritesReplacesAndLeavesNoTemporary) {
  const auto dir = std::filesystem::temp_directory_path() / ("zeropp_atomic_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  write_file_atomically(dir / "sub" / "a.json", "first");  // parents created
  write_file_atomically(dir / "sub" / "a.json", "second");
  EXPECT_EQ(read(dir / "sub" / "a.json"), "second");
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir / "sub")) ++files;
  EXPECT_EQ(files, 1);
  try {
    write_file_atomically(dir / "missing" / "b.json", "x", "report", ParentDirs::must_exist);
    FAIL() << "a missing folder was accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "report");
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "missing"));
  std::filesystem::remove_all(dir);
}

// A write that fails after the temporary exists (here the rename: the target is a folder) removes it again.
TEST(AtomicFile, AFailedWriteLeavesNothingBehind) {
  const auto dir = std::filesystem::temp_directory_path() / ("zeropp_atomic_fail_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "taken");
  try {
    write_file_atomically(dir / "taken", "x", "output", ParentDirs::must_exist);
    FAIL() << "a folder was replaced by a file";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "output");
    EXPECT_NE(std::string(e.what()).find("cannot move the new " + (dir / "taken").string() + " into place"),
              std::string::npos)
        << e.what();
  }
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) left.push_back(entry.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"taken"});
  EXPECT_TRUE(std::filesystem::is_directory(dir / "taken"));
  std::filesystem::remove_all(dir);
}

using OutputPath = ScratchDir;

bool is_link(const std::filesystem::path& p) { return std::filesystem::is_symlink(std::filesystem::symlink_status(p)); }

// What arrives on `fd` within 10 s (the text is written before, so it is there at once unless the writer is
// broken; the limit keeps a broken writer from hanging the test).
std::string drain(int fd) {
  std::string text;
  char chunk[4096];
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, 10000) > 0) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    p.revents = 0;
  }
  return text;
}

// Up to `bytes` bytes from a terminal's master side.
std::string drain_some(int fd, std::size_t bytes) {
  std::string text;
  char chunk[256];
  pollfd p{fd, POLLIN, 0};
  while (text.size() < bytes && ::poll(&p, 1, 10000) > 0) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    p.revents = 0;
  }
  return text;
}

std::string message_of(const std::filesystem::path& path, const std::string& field) {
  try {
    write_file_atomically(path, "new", field, ParentDirs::must_exist);
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), field);
    return e.what();
  }
  return "(written)";
}

TEST_F(OutputPath, ALinkIsFollowedAndTheFileItResolvesToReplaced) {
  const auto real = write("real.json", "old");
  std::filesystem::create_symlink(real, dir_ / "link");
  std::filesystem::create_symlink(dir_ / "link", dir_ / "link-to-link");
  write_file_atomically(dir_ / "link-to-link", "new", "-o", ParentDirs::must_exist);
  EXPECT_EQ(read(real), "new");
  EXPECT_TRUE(is_link(dir_ / "link"));
  EXPECT_TRUE(is_link(dir_ / "link-to-link"));
  EXPECT_EQ(read(dir_ / "link-to-link"), "new");
}

TEST_F(OutputPath, ALinkToNothingIsRefusedAndStaysALink) {
  std::filesystem::create_symlink(dir_ / "missing.json", dir_ / "dangling");
  EXPECT_EQ(message_of(dir_ / "dangling", "--csv"), "--csv: " + (dir_ / "dangling").string() +
                                                        " is a symbolic link to " + (dir_ / "missing.json").string() +
                                                        ", which does not exist; name the file to write itself");
  EXPECT_TRUE(is_link(dir_ / "dangling"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "missing.json"));
}

TEST_F(OutputPath, AFifoIsWrittenInPlace) {
  const auto fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read(fifo); });  // opening blocks until the writer opens, and the other way round
  write_file_atomically(fifo, "through the fifo", "--trace", ParentDirs::must_exist);
  reader.join();
  EXPECT_EQ(got, "through the fifo");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// /dev/stdout is a link to /proc/self/fd/1: the same kind of link to this process's pipe.
TEST_F(OutputPath, ALinkToAnOpenPipeIsWrittenInPlace) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const auto link = dir_ / "stdout-like";
  std::filesystem::create_symlink("/proc/self/fd/" + std::to_string(ends[1]), link);
  write_file_atomically(link, "through the pipe", "-o", ParentDirs::must_exist);
  ::close(ends[1]);
  EXPECT_EQ(drain(ends[0]), "through the pipe");
  ::close(ends[0]);
  EXPECT_TRUE(is_link(link));
}

// This process's own standard output, reached through a link as /dev/stdout is: written there, not replaced.
TEST_F(OutputPath, TheProcessOwnStandardOutputIsWrittenThere) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(ends[1], STDOUT_FILENO), STDOUT_FILENO);
  const auto link = dir_ / "my-stdout";
  std::filesystem::create_symlink("/proc/self/fd/1", link);
  std::string error;
  try {
    write_file_atomically(link, "to stdout", "-o", ParentDirs::must_exist);
  } catch (const SpecError& e) {
    error = e.what();
  }
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(ends[1]);
  EXPECT_EQ(error, "");
  EXPECT_EQ(drain(ends[0]), "to stdout");
  ::close(ends[0]);
  EXPECT_TRUE(is_link(link));
}

// A character device (here a pseudo-terminal this test opens, reached through a link in its folder): written in
// place, never replaced by a regular file.
TEST_F(OutputPath, ACharacterDeviceIsWrittenInPlace) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0 || ::ptsname(master) == nullptr) {
    if (master >= 0) ::close(master);
    GTEST_SKIP() << "no pseudo-terminal to write to here";
  }
  const std::string terminal = ::ptsname(master);
  const int keep_open = ::open(terminal.c_str(), O_RDWR | O_NOCTTY);  // so the terminal outlives the write
  ASSERT_GE(keep_open, 0);
  const auto link = dir_ / "terminal";
  std::filesystem::create_symlink(terminal, link);
  write_file_atomically(link, "on the terminal", "--csv", ParentDirs::must_exist);  // no newline: no translation
  struct stat st {};
  ASSERT_EQ(::stat(terminal.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(drain_some(master, 15), "on the terminal");
  EXPECT_TRUE(is_link(link));
  ::close(keep_open);
  ::close(master);
}

TEST_F(OutputPath, ASocketIsRefused) {
  const auto path = dir_ / "sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.string().size(), sizeof address.sun_path);
  std::strcpy(address.sun_path, path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(message_of(path, "-o"),
            "-o: " + path.string() + " is a socket; an output goes to a file, a character device or a FIFO");
  ::close(fd);
}

TEST_F(OutputPath, AnEmptyPathIsRefused) {
  EXPECT_EQ(message_of("", "--csv"), "--csv: the output path is empty");
  try {
    check_output_path("", "-o");
    ADD_FAILURE() << "an empty path was accepted";
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "-o: the output path is empty");
  }
}

// The same file as an input, however it is named: its path, a hard link, a symbolic link. Refused, untouched.
TEST_F(OutputPath, AnInputOfTheCommandIsRefusedUnderEveryName) {
  const std::string model = "{\"name\": \"m\"}";
  const auto input = write("model.json", model);
  std::filesystem::create_hard_link(input, dir_ / "hard.json");
  std::filesystem::create_symlink(input, dir_ / "soft.json");
  const InputFiles inputs;
  read_json_file(input);
  for (const auto& name : {input, dir_ / "hard.json", dir_ / "soft.json", dir_ / "." / "model.json"}) {
    EXPECT_EQ(message_of(name, "--csv"), "--csv: " + name.string() + " is the same file as the input " +
                                             input.string() +
                                             "; writing it would destroy the input: write the output elsewhere");
    EXPECT_THROW(check_output_path(name, "--csv"), SpecError);
  }
  EXPECT_EQ(read(input), model);
  write_file_atomically(dir_ / "other.json", "fine", "--csv", ParentDirs::must_exist);  // any other file
  EXPECT_EQ(read(dir_ / "other.json"), "fine");
}

// A cache the command read (results/validation-cache) is the one output that may replace an input: a fresher copy.
TEST_F(OutputPath, ACacheTheCommandReadMayBeRefreshed) {
  const auto cache = write("cache.json", "{\"stale\": true}");
  const InputFiles inputs;
  read_json_file(cache);
  EXPECT_THROW(write_file_atomically(cache, "{}", "cache", ParentDirs::must_exist), SpecError);
  write_file_atomically(cache, "{\"fresh\": true}", "cache", ParentDirs::must_exist, Output::cache);
  EXPECT_EQ(read(cache), "{\"fresh\": true}");
}

// Without a live record (library use, these unit tests elsewhere) reading does not bind anything.
TEST_F(OutputPath, WithoutARecordReadFilesMayBeRewritten) {
  const auto file = write("config.json", "{}");
  read_json_file(file);
  write_file_atomically(file, "{\"a\": 1}", "-o", ParentDirs::must_exist);
  EXPECT_EQ(read(file), "{\"a\": 1}");
}

TEST_F(OutputPath, AReplacedFileKeepsItsPermissionBits) {
  const auto file = write("private.json", "old");
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  write_file_atomically(file, "new", "-o", ParentDirs::must_exist);
  EXPECT_EQ(read(file), "new");
  EXPECT_EQ(std::filesystem::status(file).permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

}  // namespace
}  // namespace zeropp
