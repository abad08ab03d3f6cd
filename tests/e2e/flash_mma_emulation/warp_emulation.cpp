// The host emulation of warp_emulation.hpp: lanes as fibers, warp-wide instructions carried out when all 32 lanes
// have reached them, per-thread cp.async queues and a shared-memory race check.
#include "tests/e2e/flash_mma_emulation/warp_emulation.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/e2e/flash_mma_emulation/fiber.hpp"

namespace zeropp::emu {

LayoutMutation& layout_mutation() {
  static LayoutMutation m = LayoutMutation::none;
  return m;
}

namespace {

constexpr int kLanes = 32;
constexpr std::size_t kLaneStack = 64 * 1024;  // the kernels' frames are a few KB (registers of a lane)

// ---- global memory: registered ranges, with a write count per byte.
struct Range {
  const unsigned char* begin;
  std::size_t bytes;
  bool writable;
  std::unique_ptr<std::atomic<unsigned>[]> writes;
};
std::mutex globals_mutex;
std::map<const unsigned char*, Range> globals;  // by first byte; filled only between launches

const Range* range_of(const void* p, std::size_t bytes) {
  const auto* b = static_cast<const unsigned char*>(p);
  auto it = globals.upper_bound(b);
  if (it == globals.begin()) return nullptr;
  --it;
  const Range& r = it->second;
  return b >= r.begin && b + bytes <= r.begin + r.bytes ? &r : nullptr;
}

// ---- one block's state on the OS thread running it.
enum class Op { mma, ldmatrix, shfl, barrier, exit };
const char* op_name(Op op) {
  switch (op) {
    case Op::mma:
      return "mma.sync";
    case Op::ldmatrix:
      return "ldmatrix";
    case Op::shfl:
      return "shfl.sync";
    case Op::barrier:
      return "__syncthreads";
    case Op::exit:
      return "return";
  }
  return "?";
}

// What a lane brings to a warp-wide instruction and what it gets back.
struct Slot {
  Op op = Op::exit;
  int variant = 0;  // ldmatrix: matrices * 2 + trans; shfl: the lane mask
  std::uint32_t addr = 0;
  std::uint32_t a[4] = {}, b[2] = {};
  float c[4] = {};
  float value = 0.0f;
  std::uint32_t out_u[4] = {};
  float out_f[4] = {};
};

struct Copy {
  unsigned char* dst;
  const unsigned char* src;
  int bytes;
  bool valid;
};

struct Lane {
  Context ctx;
  std::unique_ptr<unsigned char[]> stack;
  int tid = 0;
  Slot slot;
  std::vector<Copy> open;                // issued since the last commit
  std::deque<std::vector<Copy>> groups;  // committed, oldest first
};

// The race check's record of one 4-byte word of shared memory.
struct Word {
  int write_epoch = -1, writer = -1;  // the last completed write
  int read_epoch = -1, reader = -1;   // the last read epoch and its reader (kSeveral: more than one)
  int pending = -1;                   // the thread whose copy into it is in flight
};
constexpr int kSeveral = -2;

enum class WarpState { runnable, at_barrier, exited };

struct Block {
  Dim3 grid, dim, idx;
  const std::function<void()>* kernel = nullptr;
  bool reverse_warps = false;
  std::vector<unsigned char> smem;
  std::vector<Word> shadow;
  int epoch = 0;
  std::vector<Lane> lanes;
  std::vector<WarpState> warps;
  Context scheduler;
  std::string error;
};

thread_local Block* tl_block = nullptr;
thread_local Lane* tl_lane = nullptr;

Block& block() { return *tl_block; }
Lane& lane() { return *tl_lane; }

std::string where(const Lane& l) {
  const Block& b = block();
  return "block (" + std::to_string(b.idx.x) + ", " + std::to_string(b.idx.y) + "), thread " + std::to_string(l.tid) +
         ": ";
}

// A fault: recorded (the block's first) for the scheduler to throw, then the lane is left for good. Its frames are
// abandoned, never unwound, so the message is built and recorded in a full expression of its own (its temporaries
// destroyed) before the switch: hence a macro. Nothing else on a lane's stack owns memory.
void record_fault(const std::string& what) {
  Block& b = block();
  if (b.error.empty()) b.error = where(lane()) + what;
}
[[noreturn]] void leave_lane() {
  switch_context(lane().ctx, block().scheduler);
  std::abort();  // never resumed
}
#define ZEROPP_EMU_FAIL(message)          \
  do {                                    \
    ::zeropp::emu::record_fault(message); \
    ::zeropp::emu::leave_lane();          \
  } while (false)

// Message builders run only on a fault: the checks below run millions of times.
template <typename Message>
void require(bool ok, Message message) {
  if (!ok) ZEROPP_EMU_FAIL(message());
}

// ---- shared memory: bounds, alignment and the race check. Shared addresses are offsets into the block's memory.
std::size_t smem_offset(std::uint32_t addr, std::size_t bytes, std::size_t align, const char* what) {
  Block& b = block();
  const std::size_t off = addr;
  require(off + bytes <= b.smem.size(), [&] {
    return std::string(what) + ": shared address " + std::to_string(off) + " outside the block's " +
           std::to_string(b.smem.size()) + " bytes of shared memory";
  });
  require(off % align == 0,
          [&] { return std::string(what) + ": shared address not " + std::to_string(align) + "-byte aligned"; });
  return off;
}

std::string word_at(const char* what, std::size_t word, int tid) {
  return std::string(what) + " of shared byte " + std::to_string(word * 4) + " by thread " + std::to_string(tid) + ": ";
}

void check_read(std::size_t off, std::size_t bytes, int tid, const char* what) {
  Block& b = block();
  for (std::size_t w = off / 4; w < (off + bytes) / 4; ++w) {
    Word& s = b.shadow[w];
    if (s.pending != -1)
      ZEROPP_EMU_FAIL(word_at(what, w, tid) +
                      (s.pending == tid ? std::string("its own cp.async is not complete (no cp.async.wait_group)")
                                        : "thread " + std::to_string(s.pending) + "'s cp.async into it is in flight"));
    if (s.writer == -1) ZEROPP_EMU_FAIL(word_at(what, w, tid) + "never written");
    if (s.write_epoch == b.epoch && s.writer != tid)
      ZEROPP_EMU_FAIL(word_at(what, w, tid) + "written by thread " + std::to_string(s.writer) +
                      " with no __syncthreads in between");
    if (s.read_epoch == b.epoch && s.reader != tid)
      s.reader = kSeveral;
    else
      s.read_epoch = b.epoch, s.reader = tid;
  }
}

void check_copy_issue(std::size_t off, std::size_t bytes, int tid) {
  Block& b = block();
  for (std::size_t w = off / 4; w < (off + bytes) / 4; ++w) {
    Word& s = b.shadow[w];
    if (s.pending != -1)
      ZEROPP_EMU_FAIL(word_at("cp.async", w, tid) + "thread " + std::to_string(s.pending) +
                      "'s copy into it is in flight");
    if (s.read_epoch == b.epoch && s.reader != tid)
      ZEROPP_EMU_FAIL(
          word_at("cp.async", w, tid) +
          (s.reader == kSeveral ? std::string("other threads read") : "thread " + std::to_string(s.reader) + " read") +
          " it with no __syncthreads in between");
    if (s.write_epoch == b.epoch && s.writer != tid)
      ZEROPP_EMU_FAIL(word_at("cp.async", w, tid) + "thread " + std::to_string(s.writer) +
                      " wrote it with no __syncthreads in between");
    s.pending = tid;
  }
}

void complete_copy(const Copy& c, int tid) {
  Block& b = block();
  if (c.valid)
    std::memcpy(c.dst, c.src, static_cast<std::size_t>(c.bytes));
  else
    std::memset(c.dst, 0, static_cast<std::size_t>(c.bytes));
  const std::size_t off = static_cast<std::size_t>(c.dst - b.smem.data());
  for (std::size_t w = off / 4; w < (off + static_cast<std::size_t>(c.bytes)) / 4; ++w) {
    Word& s = b.shadow[w];
    s.pending = -1;
    s.write_epoch = b.epoch;
    s.writer = tid;
  }
}

// ---- warp-wide instructions.
float bf(std::uint32_t reg, int half) {
  const std::uint32_t bits = half == 0 ? reg & 0xffffu : reg >> 16;
  return std::bit_cast<float>(bits << 16);
}

// The layouts of fragment_layout.hpp as tables, built once per launch (the mutation may change between launches),
// after checking that each maps the lanes' elements onto its matrix one to one.
struct Layouts {
  Coord a[kLanes][8], b[kLanes][4], c[kLanes][4], ld[2][kLanes][2];
};
Layouts layouts;

template <int Rows, int Cols, int PerLane>
void check_one_to_one(const Coord (&map)[kLanes][PerLane], const char* what) {
  int seen[Rows][Cols] = {};
  for (int l = 0; l < kLanes; ++l)
    for (int e = 0; e < PerLane; ++e) {
      const Coord rc = map[l][e];
      if (rc.row < 0 || rc.row >= Rows || rc.col < 0 || rc.col >= Cols || seen[rc.row][rc.col]++ != 0)
        throw EmulationError(std::string("the ") + what + " layout does not map the lanes' elements one to one");
    }
}

void build_layouts() {
  for (int l = 0; l < kLanes; ++l) {
    for (int e = 0; e < 8; ++e) layouts.a[l][e] = a_coord(l, e);
    for (int e = 0; e < 4; ++e) layouts.b[l][e] = b_coord(l, e), layouts.c[l][e] = c_coord(l, e);
    for (int t = 0; t < 2; ++t)
      for (int e = 0; e < 2; ++e) layouts.ld[t][l][e] = ldmatrix_coord(l, e, t == 1);
  }
  check_one_to_one<16, 16>(layouts.a, "mma A");
  check_one_to_one<16, 8>(layouts.b, "mma B");
  check_one_to_one<16, 8>(layouts.c, "mma C");
  for (int t = 0; t < 2; ++t) {
    Coord per_register[kLanes][2];
    std::copy(&layouts.ld[t][0][0], &layouts.ld[t][0][0] + 2 * kLanes, &per_register[0][0]);
    check_one_to_one<8, 8>(per_register, t == 1 ? "ldmatrix .trans" : "ldmatrix");
  }
}

void run_mma(Lane* w) {
  double A[16][16], B[16][8], C[16][8];
  for (int l = 0; l < kLanes; ++l) {
    const Slot& s = w[l].slot;
    for (int e = 0; e < 8; ++e) A[layouts.a[l][e].row][layouts.a[l][e].col] = bf(s.a[e / 2], e % 2);
    for (int e = 0; e < 4; ++e) {
      B[layouts.b[l][e].row][layouts.b[l][e].col] = bf(s.b[e / 2], e % 2);
      C[layouts.c[l][e].row][layouts.c[l][e].col] = s.c[e];
    }
  }
  // Products of bf16 are exact in double, and so is the sum of 16 of them and C to within double rounding: the
  // result is the exact D rounded once to fp32 (the tensor cores' own order of fp32 additions is not documented).
  float D[16][8];
  for (int m = 0; m < 16; ++m) {
    double acc[8];
    for (int n = 0; n < 8; ++n) acc[n] = C[m][n];
    for (int k = 0; k < 16; ++k)
      for (int n = 0; n < 8; ++n) acc[n] += A[m][k] * B[k][n];
    for (int n = 0; n < 8; ++n) D[m][n] = static_cast<float>(acc[n]);
  }
  for (int l = 0; l < kLanes; ++l)
    for (int e = 0; e < 4; ++e) w[l].slot.out_f[e] = D[layouts.c[l][e].row][layouts.c[l][e].col];
}

void run_ldmatrix(Lane* w, int matrices, bool trans) {
  std::uint16_t M[4][8][8];
  for (int i = 0; i < matrices; ++i)
    for (int r = 0; r < 8; ++r) {
      const Lane& from = w[8 * i + r];
      const std::size_t off = smem_offset(from.slot.addr, 16, 16, "ldmatrix row");
      check_read(off, 16, from.tid, "ldmatrix");
      std::memcpy(M[i][r], block().smem.data() + off, 16);
    }
  for (int l = 0; l < kLanes; ++l)
    for (int i = 0; i < matrices; ++i) {
      std::uint32_t reg = 0;
      for (int e = 0; e < 2; ++e) {
        const Coord rc = layouts.ld[trans ? 1 : 0][l][e];
        reg |= std::uint32_t{M[i][rc.row][rc.col]} << (16 * e);
      }
      w[l].slot.out_u[i] = reg;
    }
}

// The calling lane has filled its slot for `op`: wait for the rest of the warp (the lanes run in order, the last one
// carries the instruction out), or, at a barrier or the end, hand the warp back to the scheduler.
void arrive(Op op, int variant = 0) {
  Block& b = block();
  Lane& me = lane();
  me.slot.op = op;
  me.slot.variant = variant;
  const int l = me.tid % kLanes, w = me.tid / kLanes;
  Lane* warp_lanes = &b.lanes[static_cast<std::size_t>(w) * kLanes];
  if (l + 1 < kLanes) {
    tl_lane = &warp_lanes[l + 1];
    switch_context(me.ctx, warp_lanes[l + 1].ctx);
    tl_lane = &me;
    return;
  }
  for (int i = 0; i < kLanes; ++i) {
    const Slot& s = warp_lanes[i].slot;
    if (s.op != op || s.variant != variant)
      ZEROPP_EMU_FAIL("divergence: lane " + std::to_string(i) + " is at " + op_name(s.op) + " (" +
                      std::to_string(s.variant) + ") while lane 31 is at " + op_name(op) + " (" +
                      std::to_string(variant) + ")");
  }
  switch (op) {
    case Op::mma:
      run_mma(warp_lanes);
      break;
    case Op::ldmatrix:
      run_ldmatrix(warp_lanes, variant / 2, variant % 2 == 1);
      break;
    case Op::shfl:
      for (int i = 0; i < kLanes; ++i) warp_lanes[i].slot.out_f[0] = warp_lanes[i ^ variant].slot.value;
      break;
    case Op::barrier:
    case Op::exit:
      b.warps[static_cast<std::size_t>(w)] = op == Op::barrier ? WarpState::at_barrier : WarpState::exited;
      switch_context(me.ctx, b.scheduler);  // resumed (at a barrier) when lane 30 reaches the next instruction
      tl_lane = &me;
      return;
  }
  tl_lane = &warp_lanes[0];
  switch_context(me.ctx, warp_lanes[0].ctx);
  tl_lane = &me;
}

void lane_main() {
  fiber_entered();
  Block& b = block();
  (*b.kernel)();
  Lane& me = lane();
  if (!me.open.empty() || !me.groups.empty()) ZEROPP_EMU_FAIL("returns with cp.async copies never waited for");
  arrive(Op::exit);
  std::abort();  // an exited warp is never resumed
}

void run_block(Block& b) {
  const int threads = static_cast<int>(b.dim.x * b.dim.y * b.dim.z);
  const int nwarps = threads / kLanes;
  std::fill(b.shadow.begin(), b.shadow.end(), Word{});
  std::fill(b.smem.begin(), b.smem.end(), static_cast<unsigned char>(0xff));  // NaN in bf16 and fp32 alike
  b.epoch = 0;
  b.error.clear();
  b.warps.assign(static_cast<std::size_t>(nwarps), WarpState::runnable);
  for (int t = 0; t < threads; ++t) {
    Lane& l = b.lanes[static_cast<std::size_t>(t)];
    l.tid = t;
    l.slot = Slot{};
    l.open.clear();
    l.groups.clear();
    l.ctx = make_context(l.stack.get(), kLaneStack, &lane_main);
  }
  for (;;) {
    for (int k = 0; k < nwarps; ++k) {
      const int w = b.reverse_warps ? nwarps - 1 - k : k;
      if (b.warps[static_cast<std::size_t>(w)] != WarpState::runnable) continue;
      Lane& first = b.lanes[static_cast<std::size_t>(w) * kLanes];
      tl_lane = &first;
      switch_context(b.scheduler, first.ctx);
      if (!b.error.empty()) throw EmulationError(b.error);
    }
    const auto exited = std::count(b.warps.begin(), b.warps.end(), WarpState::exited);
    if (exited == nwarps) return;
    if (exited > 0)
      throw EmulationError("block (" + std::to_string(b.idx.x) + ", " + std::to_string(b.idx.y) +
                           "): " + std::to_string(exited) + " warp(s) returned while the others wait at __syncthreads");
    ++b.epoch;
    std::fill(b.warps.begin(), b.warps.end(), WarpState::runnable);
  }
}

}  // namespace

// ---- the CUDA built-ins
Dim3 thread_index() {
  const Dim3& d = block().dim;
  const unsigned t = static_cast<unsigned>(lane().tid);
  return {t % d.x, t / d.x % d.y, t / (d.x * d.y)};
}
Dim3 block_index() { return block().idx; }
Dim3 grid_dim() { return block().grid; }
Dim3 block_dim() { return block().dim; }

void launch(const Launch& how, const std::function<void()>& kernel) {
  const unsigned threads = how.block.x * how.block.y * how.block.z;
  if (threads == 0 || threads % kLanes != 0) throw EmulationError("launch: block size must be whole warps");
  const std::size_t blocks = std::size_t{how.grid.x} * how.grid.y * how.grid.z;
  build_layouts();
  std::atomic<std::size_t> next{0};
  std::mutex error_mutex;
  std::string first_error;
  auto worker = [&] {
    Block b;
    b.grid = how.grid;
    b.dim = how.block;
    b.kernel = &kernel;
    b.reverse_warps = how.reverse_warps;
    b.smem.resize(how.smem_bytes);
    b.shadow.resize((how.smem_bytes + 3) / 4);
    b.lanes.resize(threads);
    b.scheduler = thread_context();
    for (Lane& l : b.lanes) l.stack = std::make_unique<unsigned char[]>(kLaneStack);
    tl_block = &b;
    for (std::size_t i; (i = next++) < blocks;) {
      b.idx = {static_cast<unsigned>(i % how.grid.x), static_cast<unsigned>(i / how.grid.x % how.grid.y),
               static_cast<unsigned>(i / (std::size_t{how.grid.x} * how.grid.y))};
      try {
        run_block(b);
      } catch (const EmulationError& e) {
        const std::lock_guard lock(error_mutex);
        if (first_error.empty()) first_error = e.what();
        next = blocks;  // stop handing out blocks
      }
    }
    tl_block = nullptr;
    tl_lane = nullptr;
  };
  const int n = std::max(1, std::min<int>(how.host_threads, static_cast<int>(blocks)));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (!first_error.empty()) throw EmulationError(first_error);
}

void register_global(const void* p, std::size_t bytes, bool writable) {
  const std::lock_guard lock(globals_mutex);
  const auto* b = static_cast<const unsigned char*>(p);
  auto writes = std::make_unique<std::atomic<unsigned>[]>(bytes);
  for (std::size_t i = 0; i < bytes; ++i) writes[i] = 0;
  globals[b] = Range{b, bytes, writable, std::move(writes)};
}

void clear_globals() {
  const std::lock_guard lock(globals_mutex);
  globals.clear();
}

std::vector<unsigned> writes_of(const void* p, std::size_t bytes) {
  const Range* r = range_of(p, bytes);
  if (r == nullptr) throw EmulationError("writes_of: not a registered range");
  std::vector<unsigned> out(bytes);
  const std::size_t off = static_cast<std::size_t>(static_cast<const unsigned char*>(p) - r->begin);
  for (std::size_t i = 0; i < bytes; ++i) out[i] = r->writes[off + i];
  return out;
}

float bf16_to_float(__nv_bfloat16 v) { return std::bit_cast<float>(std::uint32_t{v.bits} << 16); }

__nv_bfloat16 float_to_bf16(float v) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((u >> 16) | 0x40u)};  // NaN stays NaN
  return {static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}

}  // namespace zeropp::emu

// ---- the primitives of e2e/backend/cuda/warp_mma.cuh
namespace zeropp::e2e::cuda::warp {

using emu::Op;

unsigned char* dynamic_smem() { return emu::block().smem.data(); }

std::uint32_t smem_addr(const void* p) {
  const auto* c = static_cast<const unsigned char*>(p);
  const unsigned char* base = emu::block().smem.data();
  if (c < base || c > base + emu::block().smem.size()) ZEROPP_EMU_FAIL("smem_addr: not a shared-memory pointer");
  return static_cast<std::uint32_t>(c - base);
}

void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  emu::Slot& s = emu::lane().slot;
  std::copy(a, a + 4, s.a);
  s.b[0] = b0;
  s.b[1] = b1;
  std::copy(d, d + 4, s.c);
  emu::arrive(Op::mma);
  const emu::Slot& r = emu::lane().slot;
  std::copy(r.out_f, r.out_f + 4, d);
}

namespace {
void ldmatrix(std::uint32_t* r, int matrices, bool trans, std::uint32_t row) {
  emu::lane().slot.addr = row;
  emu::arrive(Op::ldmatrix, matrices * 2 + (trans ? 1 : 0));
  const emu::Slot& s = emu::lane().slot;
  std::copy(s.out_u, s.out_u + matrices, r);
}

void cp_async(std::uint32_t dst, const void* src, int bytes, bool valid) {
  emu::Lane& me = emu::lane();
  const std::size_t off =
      emu::smem_offset(dst, static_cast<std::size_t>(bytes), static_cast<std::size_t>(bytes), "cp.async destination");
  // The source must be mapped even when nothing is read (src-size 0).
  if (emu::range_of(src, static_cast<std::size_t>(bytes)) == nullptr)
    ZEROPP_EMU_FAIL("cp.async source outside every registered global buffer");
  if (reinterpret_cast<std::uintptr_t>(src) % static_cast<std::uintptr_t>(bytes) != 0)
    ZEROPP_EMU_FAIL("cp.async source not " + std::to_string(bytes) + "-byte aligned");
  emu::check_copy_issue(off, static_cast<std::size_t>(bytes), me.tid);
  me.open.push_back({emu::block().smem.data() + off, static_cast<const unsigned char*>(src), bytes, valid});
}

void global_write(void* p, const void* v, std::size_t bytes, const char* what) {
  const emu::Range* r = emu::range_of(p, bytes);
  if (r == nullptr || !r->writable) ZEROPP_EMU_FAIL(std::string(what) + " outside every writable global buffer");
  if (reinterpret_cast<std::uintptr_t>(p) % bytes != 0) ZEROPP_EMU_FAIL(std::string(what) + " not aligned");
  std::memcpy(p, v, bytes);
  const std::size_t off = static_cast<std::size_t>(static_cast<unsigned char*>(p) - r->begin);
  for (std::size_t i = 0; i < bytes; ++i) ++r->writes[off + i];
}
}  // namespace

void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t row) { ldmatrix(r, 4, false, row); }
void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t row) { ldmatrix(r, 4, true, row); }
void ldmatrix_x1(std::uint32_t (&r)[1], std::uint32_t row, bool trans) { ldmatrix(r, 1, trans, row); }
void ldmatrix_x2(std::uint32_t (&r)[2], std::uint32_t row, bool trans) { ldmatrix(r, 2, trans, row); }

void cp_async_16(std::uint32_t dst, const void* src, bool valid) { cp_async(dst, src, 16, valid); }
void cp_async_4(std::uint32_t dst, const void* src, bool valid) { cp_async(dst, src, 4, valid); }

void cp_async_commit() {
  emu::Lane& me = emu::lane();
  me.groups.push_back(std::move(me.open));
  me.open.clear();
}

void cp_async_wait_groups(int n) {
  emu::Lane& me = emu::lane();
  while (static_cast<int>(me.groups.size()) > n) {
    for (const emu::Copy& c : me.groups.front()) emu::complete_copy(c, me.tid);
    me.groups.pop_front();
  }
}

void block_sync() { emu::arrive(Op::barrier); }

float shfl_xor(float v, int lane_mask) {
  if (lane_mask <= 0 || lane_mask >= emu::kLanes) ZEROPP_EMU_FAIL("shfl_xor: lane mask out of range");
  emu::lane().slot.value = v;
  emu::arrive(Op::shfl, lane_mask);
  return emu::lane().slot.out_f[0];
}

float2 lds_f32x2(std::uint32_t p) {
  const std::size_t off = emu::smem_offset(p, 8, 8, "ld.shared.v2.f32");
  emu::check_read(off, 8, emu::lane().tid, "ld.shared");
  float2 v;
  std::memcpy(&v, emu::block().smem.data() + off, 8);
  return v;
}

std::uint32_t pack_bf16x2(float lo, float hi) {
  return std::uint32_t{emu::float_to_bf16(lo).bits} | (std::uint32_t{emu::float_to_bf16(hi).bits} << 16);
}

float bf16_lo(std::uint32_t pair) { return std::bit_cast<float>(pair << 16); }
float bf16_hi(std::uint32_t pair) { return std::bit_cast<float>(pair & 0xffff0000u); }

void store_bf16x2(__nv_bfloat16* p, std::uint32_t v) { global_write(p, &v, 4, "bf16x2 store"); }
void store_f32(float* p, float v) { global_write(p, &v, 4, "fp32 store"); }

float load_f32(const float* p) {
  if (emu::range_of(p, 4) == nullptr) ZEROPP_EMU_FAIL("fp32 load outside every registered global buffer");
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace zeropp::e2e::cuda::warp
