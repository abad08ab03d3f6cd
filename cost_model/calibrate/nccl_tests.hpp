#pragma once
// The text output of NVIDIA's nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf, sendrecv_perf)
// as calibration input, beside zeropp-bench's JSON. One run per file, as the program prints it:
//   # Collective test starting: all_reduce_perf          (nccl-tests 2.16.7 and later)
//   # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 1 iters: 20 ...
//   #  Rank  0 Group  0 Pid  1234 on node-a01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3      (one per GPU)
//   #       size         count      type   redop    root     time   algbw   busbw  #wrong     time ...
//          1024           256     float     sum      -1    18.21    0.06    0.10       0    17.95 ...
//   # Out of bounds values : 0 OK
// Columns are found by their names in the column header, so the layouts of older versions read too (before 2.13:
// no root column, an "error" column holding the largest deviation instead of #wrong, and no redop column for
// sendrecv and all_gather; "#  Rank  0 Pid ..." device lines without a group).
// Each row becomes a BenchResult named "<collective>/nccl-tests/<level>/<type>/ranks:<n>/bytes:<size>" with the
// counters bytes and ranks, and the out-of-place time: the same samples zeropp-bench's collectives give
// (microbench/collective_data.hpp: nccl-tests' size S, its algbw and busbw), for the same fit.
//   - collective: the program named in the "Collective test starting" line; else inferred where the columns
//     decide it: a reduction (redop sum, ...) without a root is all_reduce, reduce_scatter or sendrecv, told
//     apart by the printed busbw/algbw ratio against analytic::busbw_factor(c, n) (on 2 ranks all_reduce and
//     sendrecv share the factor 1); else NcclTestsOptions::collective (all_gather_perf and alltoall_perf both
//     print "none", and before 2.13 sendrecv and all_gather have no redop column). Whichever way it was found,
//     every row's ratio must fit that collective on n ranks, which also checks n;
//   - group size n: the device lines, one per GPU (ranks 0 .. n-1, each once);
//   - dtype: the type column (one type and one reduction per file: run with -d TYPE -o OP);
//   - link level: NcclTestsOptions::link, else intra when every device line names the same host, inter when
//     they name several (a multi-node NVLink domain, such as GB200 NVL72, is intra: say --link intra).
// Rows: between the column header and the footer, a line is a table row when its first field is a number as
// strtod reads it ("1024", "-8", "nan", "1e30"), or when it has as many fields as the header names columns with
// an nccl-tests type name third ("0x10  4  float ..."); other lines there (NCCL INFO, warnings) are skipped.
// A row must have exactly the header's fields (a "timestamp" column, -R 1, takes two: date and time), a size and
// a count that are whole numbers >= 0, a known type (nccl-tests' names: int8 .. f8e5m2), size = count x the
// type's bytes (x n ranks for all_gather and reduce_scatter, whose count is per rank: nccl-tests prints
// max(send bytes, receive bytes) beside the per-rank count, src/common.cu), and a finite time, algbw and busbw.
// A row that breaks one of these is refused, or with NcclTestsOptions::skip_unreadable_rows left out with a note
// that counts them and names the first (the fit then has fewer sizes, and says so).
// Refused, with one line naming the file and the line: a row whose #wrong is not 0 in either column (NCCL
// returned wrong data), a footer "Out of bounds values" above 0, a row cut short, a missing header, device lines
// or footer (the run did not finish), a second run in the file, times reported as cputime (-C 1), programs
// the model has no collective for (alltoall_perf, broadcast_perf, ...), and, with check_collective, a
// NcclTestsOptions::collective that contradicts the program line or the busbw/algbw of the table. Rows of size 0
// (all_gather and reduce_scatter below one element per rank) are left out, with a note; rows not data-checked (an
// out-of-place #wrong of N/A: -c 0) are read, with a note. An in-place N/A (sendrecv's, always) is passed over.
#include <optional>
#include <string>
#include <string_view>

#include "cost_model/analytic/collectives.hpp"
#include "cost_model/calibrate/bench_results.hpp"

namespace zeropp::calibrate {

struct NcclTestsOptions {
  // The collective of output that neither names its program nor decides it by its columns.
  std::optional<analytic::Collective> collective;
  std::string link;  // "intra" or "inter"; empty: from the hosts of the device lines
  // `collective` is also a statement about output that does name or decide it (`zeropp calibrate --collective`
  // when no file given needs it): refused when the program line or the columns say otherwise. Without it, the
  // program line or the columns win.
  bool check_collective = false;
  // Leave out table rows that cannot be read (with a note that counts them) instead of refusing the file.
  bool skip_unreadable_rows = false;
};

// Parses the whole output of one nccl-tests run; `source` names it in errors ("<source>:<line>: ..."). Lines that
// are not nccl-tests' own (NCCL INFO, mpirun warnings) are skipped; mpirun --tag-output's "[1,0]<stdout>:"
// prefix is removed first. The results' device is gpu.
BenchResults parse_nccl_tests(std::string_view text, const std::string& source, const NcclTestsOptions& options);

}  // namespace zeropp::calibrate
