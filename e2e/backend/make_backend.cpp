#include <memory>
#include <string>

#include "cost_model/spec/error.hpp"
#include "e2e/backend/backend.hpp"
#include "e2e/backend/cpu_backend.hpp"

namespace zeropp::e2e {

std::unique_ptr<Backend> make_backend(std::string_view name, int threads) {
  if (name == "cpu") return std::make_unique<CpuBackend>(threads);
  // The CUDA backend registers here when built (ZEROPP_HAVE_CUDA); until then only "cpu" exists.
  throw SpecError("backend", "unknown backend '" + std::string(name) + "' (built: cpu)");
}

}  // namespace zeropp::e2e
