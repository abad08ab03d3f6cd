#pragma once
// Writes a whole file or nothing: the text goes to "<path>.tmp.<pid>" first and is renamed over `path`, so a
// reader (or a crashed run) never sees half a result. Every results file of the project (profiles, reports,
// traces, trainer results) is written through this.
#include <filesystem>
#include <string>
#include <string_view>

namespace zeropp {

enum class ParentDirs { create, must_exist };

// Throws SpecError(field) naming the file when it cannot be written or moved into place (the temporary is
// removed). Missing parent directories are created, or with ParentDirs::must_exist make the write fail (a
// user-given path with a typo in its folder should not silently create that folder).
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           const std::string& field = "output", ParentDirs parents = ParentDirs::create);

}  // namespace zeropp
