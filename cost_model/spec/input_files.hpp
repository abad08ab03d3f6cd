#pragma once
// The files a command has read, so that none of its outputs overwrites one of them (`zeropp search --model m.json
// --csv m.json` once replaced the model by the CSV). A command (the `zeropp` CLI, zeropp-train) keeps an
// InputFiles record alive while it runs; every reader of user files (spec/json_reader, calibrate/results_file,
// the trainer's token files) notes the file it opened, and the output writer (spec/atomic_file.hpp) refuses a
// target that is the same file as one of them: the same device and inode, so another spelling of the path, a
// hard link or a symbolic link is caught too. Without a live record (library use, unit tests) nothing is noted.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace zeropp {

class InputFiles {
 public:
  // This record notes what the process reads from now on; the one it replaces (if any) is restored afterwards.
  InputFiles();
  ~InputFiles();
  InputFiles(const InputFiles&) = delete;
  InputFiles& operator=(const InputFiles&) = delete;

  // Notes `path` in the live record, if there is one (a path that cannot be stat'ed was not read: not noted).
  static void note(const std::filesystem::path& path);
  // The input, as it was named, that is the file on device `device` with inode `inode`; nullopt when none is.
  static std::optional<std::string> same_file(std::uint64_t device, std::uint64_t inode);

 private:
  struct Entry {
    std::uint64_t device, inode;
    std::string name;
  };
  std::vector<Entry> entries_;
  InputFiles* previous_;
};

}  // namespace zeropp
