#pragma once
// Writes a whole file or nothing: the text goes to "<path>.tmp.<pid>" first and is renamed over `path`, so a
// reader (or a crashed run) never sees half a result. Parent directories are created.
#include <filesystem>
#include <string_view>

namespace zeropp::e2e {

void write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace zeropp::e2e
