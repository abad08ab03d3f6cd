#include "microbench/options.hpp"

#include "microbench/attention_bench.hpp"

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace zeropp::microbench {
namespace {

long parse_positive(std::string_view flag, std::string_view text) {
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(std::string(text), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value <= 0) {
    throw std::invalid_argument(std::string(flag) + "=" + std::string(text) + ": expected a positive integer");
  }
  return value;
}

std::vector<long> parse_list(std::string_view flag, std::string_view text) {
  std::vector<long> values;
  if (text.empty()) return values;  // an empty list switches that part of the suite off
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    values.push_back(parse_positive(flag, text.substr(start, comma - start)));
    start = comma + 1;
  }
  return values;
}

std::vector<std::string> parse_names(std::string_view flag, std::string_view text) {
  std::vector<std::string> names;
  if (text.empty()) return names;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    if (comma == start) throw std::invalid_argument(std::string(flag) + "=" + std::string(text) + ": empty name");
    names.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

}  // namespace

Options parse_options(int& argc, char** argv) {
  Options options;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (!arg.starts_with("--zeropp_")) {
      argv[kept++] = argv[i];
      continue;
    }
    const std::size_t eq = arg.find('=');
    if (eq == std::string_view::npos) throw std::invalid_argument(std::string(arg) + ": expected --flag=value");
    const std::string_view flag = arg.substr(0, eq);
    const std::string_view value = arg.substr(eq + 1);
    if (flag == "--zeropp_gemm_hidden") {
      options.gemm_hidden = parse_list(flag, value);
    } else if (flag == "--zeropp_gemm_tokens") {
      options.gemm_tokens = parse_list(flag, value);
    } else if (flag == "--zeropp_gemm_seq") {
      options.gemm_seq = parse_list(flag, value);
    } else if (flag == "--zeropp_gemm_head_dim") {
      options.gemm_head_dim = parse_positive(flag, value);
    } else if (flag == "--zeropp_gemm_square") {
      options.gemm_square = parse_list(flag, value);
    } else if (flag == "--zeropp_gemm_models") {
      options.gemm_models = parse_names(flag, value);
    } else if (flag == "--zeropp_gemm_tp") {
      options.gemm_tp = parse_list(flag, value);
    } else if (flag == "--zeropp_gemm_batch") {
      options.gemm_batch = parse_list(flag, value);
    } else if (flag == "--zeropp_list_shapes") {
      if (value.empty()) throw std::invalid_argument("--zeropp_list_shapes: expected a file path");
      options.list_shapes = value;
    } else if (flag == "--zeropp_kernel_rows") {
      options.kernel_rows = parse_list(flag, value);
    } else if (flag == "--zeropp_kernel_hidden") {
      options.kernel_hidden = parse_list(flag, value);
    } else if (flag == "--zeropp_kernel_vocab") {
      options.kernel_vocab = parse_list(flag, value);
    } else if (flag == "--zeropp_layer_hidden") {
      options.layer_hidden = parse_list(flag, value);
    } else if (flag == "--zeropp_layer_head_dim") {
      options.layer_head_dim = parse_positive(flag, value);
    } else if (flag == "--zeropp_layer_seq") {
      options.layer_seq = parse_positive(flag, value);
    } else if (flag == "--zeropp_layer_batch") {
      options.layer_batch = parse_positive(flag, value);
    } else if (flag == "--zeropp_attention_heads") {
      options.attention_heads = parse_list(flag, value);
    } else if (flag == "--zeropp_attention_kv_heads") {
      options.attention_kv_heads = parse_list(flag, value);
    } else if (flag == "--zeropp_attention_seq") {
      options.attention_seq = parse_positive(flag, value);
    } else if (flag == "--zeropp_attention_head_dim") {
      options.attention_head_dim = parse_positive(flag, value);
    } else if (flag == "--zeropp_attention_batch") {
      options.attention_batch = parse_positive(flag, value);
    } else if (flag == "--zeropp_attention_kernels") {
      options.attention_kernels = parse_names(flag, value);
    } else if (flag == "--zeropp_optimizer_params") {
      options.optimizer_params = parse_list(flag, value);
    } else if (flag == "--zeropp_coll_min_bytes") {
      options.coll_min_bytes = static_cast<std::size_t>(parse_positive(flag, value));
    } else if (flag == "--zeropp_coll_max_bytes") {
      options.coll_max_bytes = static_cast<std::size_t>(parse_positive(flag, value));
    } else if (flag == "--zeropp_coll_step") {
      options.coll_step = static_cast<std::size_t>(parse_positive(flag, value));
      if (options.coll_step < 2) throw std::invalid_argument("--zeropp_coll_step must be at least 2");
    } else if (flag == "--zeropp_coll_points_per_step") {
      options.coll_points_per_step = static_cast<int>(parse_positive(flag, value));
    } else if (flag == "--zeropp_iterations") {
      options.iterations = static_cast<int>(parse_positive(flag, value));
    } else if (flag == "--zeropp_cpu_profile") {
      if (value.empty()) throw std::invalid_argument("--zeropp_cpu_profile: expected a file path");
      options.cpu_profile = value;
    } else {
      throw std::invalid_argument(std::string(flag) + ": unknown flag (see --help)");
    }
  }
  argv[kept] = nullptr;
  argc = kept;
  if (options.coll_min_bytes > options.coll_max_bytes) {
    throw std::invalid_argument("--zeropp_coll_min_bytes must not exceed --zeropp_coll_max_bytes");
  }
  for (long h : options.layer_hidden) {
    if (h % options.layer_head_dim != 0) {
      throw std::invalid_argument(
          "--zeropp_layer_hidden: " + std::to_string(h) +
          " is not a multiple of --zeropp_layer_head_dim=" + std::to_string(options.layer_head_dim));
    }
  }
  attention_cases(options.attention_heads, options.attention_kv_heads, options.attention_seq,
                  options.attention_head_dim, options.attention_batch);  // throws on lists that do not pair up
  return options;
}

std::string options_help() {
  const Options d;
  auto list = [](const std::vector<long>& v) {
    std::ostringstream out;
    for (std::size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << v[i];
    return out.str();
  };
  std::ostringstream out;
  out << "zeropp-bench options (in addition to --benchmark_*):\n"
      << "  --zeropp_gemm_hidden=LIST     hidden sizes h of the transformer GEMMs (default " << list(d.gemm_hidden)
      << ")\n"
      << "  --zeropp_gemm_tokens=LIST     token counts s*b (default " << list(d.gemm_tokens) << ")\n"
      << "  --zeropp_gemm_seq=LIST        sequence lengths s of the per-head attention GEMMs (default "
      << list(d.gemm_seq) << ")\n"
      << "  --zeropp_gemm_head_dim=N      head dimension d of the attention GEMMs (default " << d.gemm_head_dim << ")\n"
      << "  --zeropp_gemm_square=LIST     square n^3 GEMMs (default none; 8192 on a GPU)\n"
      << "  --zeropp_gemm_models=NAMES    the layer GEMMs of these models (zoo names or paths, comma-separated;\n"
      << "                                default none) as one tensor-parallel rank runs them\n"
      << "  --zeropp_gemm_tp=LIST         tensor-parallel sizes of those GEMMs (default 1)\n"
      << "  --zeropp_gemm_batch=LIST      micro-batches b of those GEMMs, tokens b*s (default 1)\n"
      << "  --zeropp_list_shapes=PATH     write the model GEMM and attention shapes as JSON to PATH, run nothing\n"
      << "  --zeropp_kernel_rows=LIST     rows (tokens) of the memory-bound kernels of the trainer's backend\n"
      << "                                (norm, GELU, residual add, cross-entropy, AdamW; default none: off)\n"
      << "  --zeropp_kernel_hidden=LIST   hidden sizes of those kernels (default " << list(d.kernel_hidden) << ")\n"
      << "  --zeropp_kernel_vocab=LIST    vocabulary sizes of the cross-entropy kernels (default none)\n"
      << "  --zeropp_layer_hidden=LIST    hidden sizes h of the trainer's block F/B/W passes (default "
      << list(d.layer_hidden) << ")\n"
      << "  --zeropp_layer_head_dim=N     head dimension d of that block, a = h / d heads (default " << d.layer_head_dim
      << ")\n"
      << "  --zeropp_layer_seq=N          sequence length s of that block (default " << d.layer_seq << ")\n"
      << "  --zeropp_layer_batch=N        micro-batch b of that block (default " << d.layer_batch << ")\n"
      << "  --zeropp_attention_heads=LIST query heads of the attention-core cases (flash and unfused forward and\n"
      << "                                backward of the trainer's backend; default none: off)\n"
      << "  --zeropp_attention_kv_heads=LIST  key/value heads, one per --zeropp_attention_heads value (default: as\n"
      << "                                many as heads)\n"
      << "  --zeropp_attention_seq=N      sequence length s of those cases (default " << d.attention_seq << ")\n"
      << "  --zeropp_attention_head_dim=N head dimension d of those cases (default " << d.attention_head_dim << ")\n"
      << "  --zeropp_attention_batch=N    micro-batch b of those cases (default " << d.attention_batch << ")\n"
      << "  --zeropp_attention_kernels=NAMES  flash kernels of the backend also measured by name at those cases\n"
      << "                                (zeropp-bench-cuda: mma, wmma, scalar; default none: the backend's choice)\n"
      << "  --zeropp_optimizer_params=LIST  parameters per rank of the trainer's optimizer step (default "
      << list(d.optimizer_params) << ")\n"
      << "  --zeropp_coll_min_bytes=N     smallest collective buffer S in bytes (default " << d.coll_min_bytes << ")\n"
      << "  --zeropp_coll_max_bytes=N     largest collective buffer S in bytes (default " << d.coll_max_bytes << ")\n"
      << "  --zeropp_coll_step=N          size multiplier between collective sizes (default " << d.coll_step << ")\n"
      << "  --zeropp_coll_points_per_step=N  sizes per step, geometrically spaced (default " << d.coll_points_per_step
      << ")\n"
      << "  --zeropp_iterations=N         timed iterations per benchmark, same on every rank (default " << d.iterations
      << ")\n"
      << "  --zeropp_cpu_profile=PATH     write the base cluster profile of this CPU (peak from the OS and an\n"
      << "                                FMA loop, memory, one \"GPU\" per core) to PATH and run no benchmark\n"
      << "An empty list (--zeropp_gemm_hidden=) switches that part off.\n"
      << "--version prints the project version and the git commit it was built from.\n";
  return out.str();
}

}  // namespace zeropp::microbench
