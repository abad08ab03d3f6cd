#include "cost_model/spec/input_files.hpp"

#include <sys/stat.h>

#include <mutex>

namespace zeropp {
namespace {

// The live record and the lock around it (readers may run on more than one thread).
std::mutex& lock() {
  static std::mutex m;
  return m;
}
InputFiles*& live() {
  static InputFiles* record = nullptr;
  return record;
}

}  // namespace

InputFiles::InputFiles() {
  const std::lock_guard guard(lock());
  previous_ = live();
  live() = this;
}

InputFiles::~InputFiles() {
  const std::lock_guard guard(lock());
  live() = previous_;
}

void InputFiles::note(const std::filesystem::path& path) {
  const std::lock_guard guard(lock());
  if (live() == nullptr) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  live()->entries_.push_back(
      {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino), path.string()});
}

std::optional<std::string> InputFiles::same_file(std::uint64_t device, std::uint64_t inode) {
  const std::lock_guard guard(lock());
  if (live() == nullptr) return std::nullopt;
  for (const Entry& e : live()->entries_)
    if (e.device == device && e.inode == inode) return e.name;
  return std::nullopt;
}

}  // namespace zeropp
