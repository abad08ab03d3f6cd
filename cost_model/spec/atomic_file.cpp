#include "cost_model/spec/atomic_file.hpp"

#include <unistd.h>

#include <fstream>

#include "cost_model/spec/error.hpp"

namespace zeropp {

void write_file_atomically(const std::filesystem::path& path, std::string_view text, const std::string& field,
                           ParentDirs parents) {
  std::error_code ec;
  if (parents == ParentDirs::create && path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      throw SpecError(field, "cannot write " + path.string());
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw SpecError(field, "cannot move " + tmp.string() + " to " + path.string() + ": " + why);
  }
}

}  // namespace zeropp
