#include "microbench/kernel_bench.hpp"

#include <functional>
#include <memory>
#include <stdexcept>

#include "e2e/backend/backend.hpp"
#include "microbench/backend_data.hpp"
#include "microbench/mpi_world.hpp"
#include "microbench/suites.hpp"

namespace zeropp::microbench {

std::string KernelCase::name(const std::string& backend, const std::string& dtype) const {
  if (op == "adamw") return "kernel/" + backend + "/fp32/adamw/params:" + std::to_string(rows * cols);
  return "kernel/" + backend + "/" + dtype + "/" + op + (kernel ? "-" + kernel->name : "") +
         "/rows:" + std::to_string(rows) + "/cols:" + std::to_string(cols);
}

std::vector<KernelCase> kernel_cases(const std::vector<long>& rows, const std::vector<long>& hidden,
                                     const std::vector<long>& vocab,
                                     const std::vector<std::shared_ptr<const ColumnSumsRun>>& column_kernels) {
  std::vector<KernelCase> cases;
  for (long n : rows) {
    for (long c : hidden) {
      for (const char* op : {"layernorm_F", "layernorm_B", "residual_add"}) cases.push_back({op, n, c, nullptr});
      for (const char* op : {"gelu_F", "gelu_B"}) cases.push_back({op, n, 4 * c, nullptr});
      cases.push_back({"adamw", n, c, nullptr});
      for (const char* op : {"bias_W", "layernorm_W", "rmsnorm_W"})
        for (const auto& kernel : column_kernels) cases.push_back({op, n, c, kernel});
    }
    for (long v : vocab)
      for (const char* op : {"crossentropy_F", "crossentropy_B"}) cases.push_back({op, n, v, nullptr});
  }
  return cases;
}

double kernel_case_bytes(const KernelCase& c, double e) {
  const double n = static_cast<double>(c.rows), nc = n * static_cast<double>(c.cols),
               cols = static_cast<double>(c.cols);
  if (c.op == "layernorm_F") return 2 * nc * e + 2 * cols * e + 8 * n;         // x, weight, bias in; y, mean, rstd out
  if (c.op == "layernorm_B") return 3 * nc * e + cols * e + 8 * n + 8 * cols;  // dy, x, stats, w in; dx, dw, db
  if (c.op == "residual_add") return 3 * nc * e;                               // a, b in; a + b out
  if (c.op == "gelu_F") return 2 * nc * e;                                     // x in; y out
  if (c.op == "gelu_B") return 3 * nc * e;                                     // x, dy in; dx out
  if (c.op == "adamw") return 28 * nc;                                         // p, g, m, v in; p, m, v out (fp32)
  if (c.op == "bias_W") return nc * e + 4 * cols;                              // dy in; db out
  if (c.op == "layernorm_W") return 2 * nc * e + 8 * n + 8 * cols;             // dy, x, stats in; dw, db out
  if (c.op == "rmsnorm_W") return 2 * nc * e + 4 * n + 4 * cols;               // dy, x, rstd in; dw out
  if (c.op == "crossentropy_F") return 2 * nc * e + 8 * n;                     // logits, targets in; probs, losses
  if (c.op == "crossentropy_B") return 2 * nc * e + 4 * n;                     // probs, targets in; dlogits out
  throw std::invalid_argument("kernel_case_bytes: unknown kernel " + c.op);
}

void bench_kernel(benchmark::State& state, const std::string& backend_name, const KernelCase& c, MPI_Comm comm) {
  using namespace e2e;
  std::unique_ptr<Backend> backend = make_backend(backend_name, 1);
  const DType dt = backend->compute_dtype();
  const int N = static_cast<int>(c.rows), C = static_cast<int>(c.cols);
  const std::int64_t nc = std::int64_t{N} * C;
  std::vector<Buffer> keep;  // every buffer the operation touches lives as long as the benchmark
  auto rand = [&](std::int64_t n, DType d, unsigned seed) {
    keep.push_back(random_buffer(*backend, n, d, seed));
    return keep.back().view();
  };
  auto zero = [&](std::int64_t n, DType d) {
    keep.emplace_back(*backend, n, d);
    backend->fill_zero(keep.back().view());
    return keep.back().view();
  };
  std::function<void()> op;
  Tensor checked;  // an output that must be finite
  if (c.op == "layernorm_F" || c.op == "layernorm_B") {
    const Tensor x = rand(nc, dt, 1), w = rand(C, dt, 2), b = rand(C, dt, 3), y = zero(nc, dt);
    const Tensor mean = zero(N, DType::f32), rstd = zero(N, DType::f32);
    backend->layernorm_forward(y, mean, rstd, x, w, b, N, C);
    if (c.op == "layernorm_F") {
      op = [=, &backend] { backend->layernorm_forward(y, mean, rstd, x, w, b, N, C); };
      checked = y;
    } else {
      const Tensor dy = rand(nc, dt, 4), dx = zero(nc, dt), dw = zero(C, DType::f32), db = zero(C, DType::f32);
      op = [=, &backend] {
        backend->layernorm_backward_input(dx, dy, x, mean, rstd, w, N, C, false);
        backend->layernorm_backward_weight(dw, db, dy, x, mean, rstd, N, C);
      };
      checked = dx;
    }
  } else if (c.kernel && (c.op == "bias_W" || c.op == "layernorm_W" || c.op == "rmsnorm_W")) {
    // Statistics as the forward leaves them (rstd > 0); the sums add into dw, db as over micro-batches.
    const Tensor x = rand(nc, dt, 1), dy = rand(nc, dt, 4), w = rand(C, dt, 2), b = rand(C, dt, 3), y = zero(nc, dt);
    const Tensor mean = zero(N, DType::f32), rstd = zero(N, DType::f32);
    backend->layernorm_forward(y, mean, rstd, x, w, b, N, C);
    const Tensor dw = zero(C, DType::f32), db = zero(C, DType::f32);
    const bool bias = c.op == "bias_W", rms = c.op == "rmsnorm_W";
    const Tensor dweight = bias ? Tensor{} : dw, dbias = rms ? Tensor{} : db, inp = bias ? Tensor{} : x;
    const Tensor m = c.op == "layernorm_W" ? mean : Tensor{}, r = bias ? Tensor{} : rstd;
    const std::shared_ptr<const ColumnSumsRun> kernel = c.kernel;
    const std::string op_name = c.op;
    op = [=, &backend] { kernel->run(*backend, op_name, dweight, dbias, dy, inp, m, r, N, C); };
    checked = bias ? db : dw;
  } else if (c.op == "residual_add") {
    const Tensor a = rand(nc, dt, 1), b = rand(nc, dt, 2), y = zero(nc, dt);
    op = [=, &backend] { backend->add(y, a, b, nc); };
    checked = y;
  } else if (c.op == "gelu_F") {
    const Tensor x = rand(nc, dt, 1), y = zero(nc, dt);
    op = [=, &backend] { backend->gelu_forward(y, x, nc); };
    checked = y;
  } else if (c.op == "gelu_B") {
    const Tensor x = rand(nc, dt, 1), dy = rand(nc, dt, 2), dx = zero(nc, dt);
    op = [=, &backend] { backend->gelu_backward(dx, x, dy, nc); };
    checked = dx;
  } else if (c.op == "adamw") {
    const Tensor p = rand(nc, DType::f32, 1), g = rand(nc, DType::f32, 2);
    const Tensor m = zero(nc, DType::f32), v = zero(nc, DType::f32);
    AdamWArgs args;  // the trainer's defaults (e2e/optim/adamw.hpp) with weight decay, as optimizer_bench
    args.lr = 1e-3f;
    args.weight_decay = 0.1f;
    op = [=, &backend] { backend->adamw_update(p, g, m, v, nc, args); };
    checked = p;
  } else if (c.op == "crossentropy_F" || c.op == "crossentropy_B") {
    const Tensor logits = rand(nc, dt, 1), probs = zero(nc, dt), losses = zero(N, DType::f32);
    keep.push_back(random_tokens(*backend, N, C, 5));
    const Tensor targets = keep.back().view();
    backend->crossentropy_forward(losses, probs, logits, targets, N, C);
    if (c.op == "crossentropy_F") {
      op = [=, &backend] { backend->crossentropy_forward(losses, probs, logits, targets, N, C); };
      checked = losses;
    } else {
      const Tensor dlogits = zero(nc, dt);
      op = [=, &backend] { backend->crossentropy_backward(dlogits, probs, targets, N, C, 1.0f / N); };
      checked = dlogits;
    }
  } else {
    throw std::invalid_argument("bench_kernel: unknown kernel " + c.op);
  }

  op();  // warm-up
  backend->synchronize();
  if (!all_ranks_ok(all_finite(*backend, checked), comm)) {
    state.SkipWithError((c.op + " produced non-finite output").c_str());
    return;
  }
  const double bytes = kernel_case_bytes(c, static_cast<double>(dtype_size(dt)));
  const int inner = inner_repeats_for_bytes(bytes);
  double total = 0;
  for (auto _ : state) {
    backend->synchronize();
    const double start = MPI_Wtime();
    for (int i = 0; i < inner; ++i) op();
    backend->synchronize();
    const double seconds = max_over_ranks((MPI_Wtime() - start) / inner, comm);
    state.SetIterationTime(seconds);
    total += seconds;
  }
  state.counters["bytes"] = bytes;
  state.counters["GB/s"] = bytes * static_cast<double>(state.iterations()) / total / 1e9;
}

}  // namespace zeropp::microbench
