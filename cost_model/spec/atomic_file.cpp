#include "cost_model/spec/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/input_files.hpp"

namespace zeropp {
namespace {

// Writes all of `text` to `fd`; false with errno set on failure.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// The temporary file while it is being written: its descriptor is closed and the file removed on every way out
// (an error, an exception from anywhere, a signal-free early return) unless commit() moved it into place.
class Temporary {
 public:
  // O_NOFOLLOW: a link planted at the (predictable) temporary name must not redirect the write.
  explicit Temporary(std::filesystem::path path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  ~Temporary() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  bool opened() const { return fd_ >= 0; }

  // Writes all of `text`, gives the file `mode` when set (the permission bits of the file it replaces) and
  // flushes it to the disk (so a crash after the rename cannot leave an empty file); false with errno set on
  // failure.
  bool write_and_sync(std::string_view text, std::optional<mode_t> mode) {
    if (!write_all(fd_, text)) return false;
    if (mode && ::fchmod(fd_, *mode) != 0) return false;
    if (::fsync(fd_) != 0) return false;
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

  bool commit(const std::filesystem::path& target) {
    committed_ = ::rename(path_.c_str(), target.c_str()) == 0;
    return committed_;
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool committed_ = false;
};

std::filesystem::path folder_of(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

// Where and how an output goes (the rule of atomic_file.hpp).
struct Target {
  enum class How { replace, in_place, own_stream } how = How::replace;
  std::filesystem::path path;  // replace: the file to create or replace (links resolved); in_place: the path
  int fd = -1;                 // own_stream: 1 (standard output) or 2 (standard error)
  std::optional<mode_t> mode;  // replace of an existing file: its permission bits
};

const char* kind_name(mode_t mode) {
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "neither a file, a character device nor a FIFO";
}

// Whether `st` is the file behind this process's descriptor `fd`.
bool is_descriptor(const struct stat& st, int fd) {
  struct stat own {};
  return ::fstat(fd, &own) == 0 && own.st_dev == st.st_dev && own.st_ino == st.st_ino;
}

Target resolve(const std::filesystem::path& path, const std::string& field, ParentDirs parents,
               Output output = Output::result) {
  if (path.empty()) throw SpecError(field, fmt::format("{}: the output path is empty", field));
  const std::string name = path.string();
  struct stat st {};
  if (::stat(name.c_str(), &st) != 0) {
    const int error = errno;
    struct stat link {};
    if (error == ENOENT && ::lstat(name.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      std::error_code ec;
      const std::filesystem::path to = std::filesystem::read_symlink(path, ec);
      throw SpecError(field, fmt::format("{}: {} is a symbolic link to {}, which does not exist; name the file to "
                                         "write itself",
                                         field, name, ec ? "nothing readable" : to.string()));
    }
    if (error != ENOENT) throw SpecError(field, fmt::format("cannot write {}: {}", name, std::strerror(error)));
    if (parents == ParentDirs::must_exist) check_output_folder(path, field);
    return {Target::How::replace, path, -1, std::nullopt};
  }
  // A terminal may be both read and written, and a cache is read to be refreshed; any other input would be
  // destroyed.
  if (!S_ISCHR(st.st_mode) && output == Output::result) {
    if (const auto input = InputFiles::same_file(st.st_dev, st.st_ino))
      throw SpecError(field, fmt::format("{}: {} is the same file as the input {}; writing it would destroy the "
                                         "input: write the output elsewhere",
                                         field, name, *input));
  }
  for (int fd : {STDOUT_FILENO, STDERR_FILENO})
    if (is_descriptor(st, fd)) return {Target::How::own_stream, path, fd, std::nullopt};
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return {Target::How::in_place, path, -1, std::nullopt};
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    throw SpecError(field, fmt::format("{}: {} is {}; an output goes to a file, a character device or a FIFO", field,
                                       name, kind_name(st.st_mode)));
  // A regular file (or a folder, which the rename refuses): behind a link, the file the link resolves to is
  // replaced, and the link stays.
  struct stat link {};
  std::filesystem::path target = path;
  if (::lstat(name.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    std::error_code ec;
    target = std::filesystem::canonical(path, ec);
    if (ec) throw SpecError(field, fmt::format("cannot write {}: {}", name, ec.message()));
  }
  return {Target::How::replace, target, -1,
          S_ISREG(st.st_mode) ? std::optional<mode_t>(st.st_mode & 07777) : std::nullopt};
}

void write_in_place(const Target& t, std::string_view text, const std::string& field) {
  const std::string name = t.path.string();
  if (t.how == Target::How::own_stream) {
    // After what this process printed there before.
    if (t.fd == STDOUT_FILENO) {
      std::cout.flush();
      std::fflush(stdout);
    } else {
      std::cerr.flush();
      std::fflush(stderr);
    }
    if (!write_all(t.fd, text)) throw SpecError(field, fmt::format("cannot write {}: {}", name, std::strerror(errno)));
    return;
  }
  const int fd = ::open(name.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw SpecError(field, fmt::format("cannot write {}: {}", name, std::strerror(errno)));
  const bool written = write_all(fd, text);
  const int error = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed)
    throw SpecError(field, fmt::format("cannot write {}: {}", name, std::strerror(written ? errno : error)));
}

}  // namespace

void check_output_folder(const std::filesystem::path& path, const std::string& field) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder_of(path), ec))
    throw SpecError(
        field, fmt::format("cannot write {}: the folder {} does not exist", path.string(), folder_of(path).string()));
}

void check_output_path(const std::filesystem::path& path, const std::string& field, ParentDirs parents) {
  resolve(path, field, parents);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text, const std::string& field,
                           ParentDirs parents, Output output) {
  if (parents == ParentDirs::create && !path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(folder_of(path), ec);  // a failure shows as the open's error below
  }
  const Target target = resolve(path, field, parents, output);
  if (target.how != Target::How::replace) return write_in_place(target, text, field);
  const std::filesystem::path& file = target.path;
  Temporary tmp(file.string() + ".tmp." + std::to_string(::getpid()));
  if (!tmp.opened()) throw SpecError(field, fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  if (!tmp.write_and_sync(text, target.mode))
    throw SpecError(field, fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  if (!tmp.commit(file))
    throw SpecError(field, fmt::format("cannot move the new {} into place: {}", path.string(), std::strerror(errno)));
}

}  // namespace zeropp
