#pragma once
// Every output file of the project (profiles, reports, CSV, traces, trainer results, token files) is written
// through here, by one rule that depends on what the path names (README, "The zeropp CLI"):
//   - a regular file, or a path that does not exist yet: written whole or not at all. The text goes to
//     "<path>.tmp.<pid>" in the same folder first, is flushed to the disk (fsync) and renamed over the path, so a
//     reader (or a crashed run) never sees half a result; the temporary is removed on every failure path,
//     exceptions included; an existing file keeps its permission bits;
//   - a symbolic link: followed. The file it resolves to is handled by these rules (a regular file is replaced
//     atomically, the link stays a link); a link to nothing is refused;
//   - this process's own standard output or error (`-o /dev/stdout`, a path it is redirected to): written there,
//     after what the process printed before;
//   - another character device or a FIFO (/dev/null, a named pipe): written in place, never replaced (the rename
//     above once replaced /dev/null by a regular file when run as root); a FIFO waits for its reader;
//   - anything else that exists (a block device, a socket) is refused;
//   - the same file as an input of the command (device and inode, spec/input_files.hpp) is refused, except a
//     character device (a terminal may be read and written) and a cache the command read and now refreshes
//     (Output::cache);
//   - an empty path is refused.
// Every refusal is one SpecError line naming the option (`field`) and the path.
#include <filesystem>
#include <string>
#include <string_view>

namespace zeropp {

enum class ParentDirs { create, must_exist };
// What is written: a result (never over an input of the command), or a cache the command may have read first and
// replaces with a fresher one (results/validation-cache).
enum class Output { result, cache };

// Throws SpecError(field) naming the file when it cannot be written or moved into place. Missing parent
// directories are created, or with ParentDirs::must_exist make the write fail: a path the user gave (-o, --out,
// --trace) with a typo in its folder must not silently create that folder.
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           const std::string& field = "output", ParentDirs parents = ParentDirs::create,
                           Output output = Output::result);

// Every refusal write_file_atomically would make before writing (an empty path, a missing folder with
// ParentDirs::must_exist, a target of a refused kind, a link to nothing, an input of the command), for a caller
// that wants to know before hours of work. Writes nothing.
void check_output_path(const std::filesystem::path& path, const std::string& field,
                       ParentDirs parents = ParentDirs::must_exist);

// Throws SpecError(field, "cannot write <path>: the folder <parent> does not exist") unless the folder `path` goes
// into exists: what ParentDirs::must_exist checks.
void check_output_folder(const std::filesystem::path& path, const std::string& field);

}  // namespace zeropp
