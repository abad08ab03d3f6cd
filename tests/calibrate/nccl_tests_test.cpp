// Reading nccl-tests output (tests/data/nccl-tests: four layouts of nccl-tests, synthetic alpha-beta times; see its
// README), and clear one-line errors for files that are cut short, report wrong data or are not nccl-tests output.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cost_model/calibrate/calibrate.hpp"
#include "cost_model/calibrate/nccl_tests.hpp"
#include "cost_model/calibrate/results_file.hpp"
#include "cost_model/spec/config.hpp"
#include "cost_model/spec/error.hpp"
#include "zeropp/source_dir.hpp"

namespace zeropp::calibrate {
namespace {

using analytic::Collective;

std::string data(const std::string& name) { return std::string(ZEROPP_SOURCE_DIR) + "/tests/data/nccl-tests/" + name; }

std::string text_of(const std::string& name) {
  std::ifstream in(data(name));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

NcclTestsOptions named(Collective c) {
  NcclTestsOptions o;
  o.collective = c;
  return o;
}

BenchResults read(const std::string& name, NcclTestsOptions options = {}) {
  return parse_nccl_tests(text_of(name), name, options);
}

// The error's message, or "(no error)".
std::string error_of(const std::string& text, NcclTestsOptions options = {}) {
  try {
    parse_nccl_tests(text, "f.txt", options);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string field_of(const std::string& name, NcclTestsOptions options = {}) {
  try {
    read(name, options);
  } catch (const SpecError& e) {
    return e.field();
  }
  return "(no error)";
}

TEST(NcclTests, AllReduceOnOneHostIsIntraWithTheRowsAsSamples) {
  const auto r = read("all_reduce_8gpu.txt");
  ASSERT_EQ(r.results.size(), 31u);  // 8 B .. 8 GiB, doubling
  EXPECT_EQ(r.device, Device::gpu);
  EXPECT_NE(r.device_evidence.find("8 GPUs (NVIDIA H100 80GB HBM3)"), std::string::npos);
  const auto& first = r.results.front();
  EXPECT_EQ(first.name, "all_reduce/nccl-tests/intra/float/ranks:8/bytes:8");
  EXPECT_EQ(first.parts, (std::vector<std::string>{"all_reduce", "nccl-tests", "intra", "float"}));
  EXPECT_DOUBLE_EQ(first.counter("bytes"), 8);
  EXPECT_DOUBLE_EQ(first.counter("ranks"), 8);
  EXPECT_DOUBLE_EQ(first.seconds, 16.80e-6);  // the out-of-place time, us -> s
  const auto& last = r.results.back();
  EXPECT_DOUBLE_EQ(last.counter("bytes"), 8589934592.0);
  EXPECT_DOUBLE_EQ(last.seconds, 41773.4e-6);
  EXPECT_DOUBLE_EQ(last.counter("busbw_GBps"), 359.86);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("all_reduce on 8 GPUs of 1 host (intra), float, 31 sizes"), std::string::npos);
}

TEST(NcclTests, AllGatherOnTwoHostsIsInterBehindMpirunTagsAndNcclInfoLines) {
  const auto r = read("all_gather_2hosts.txt");
  ASSERT_EQ(r.results.size(), 23u);  // 64 B .. 1 GiB less the two rows of size 0
  EXPECT_EQ(r.results.front().name, "all_gather/nccl-tests/inter/float/ranks:16/bytes:256");
  EXPECT_DOUBLE_EQ(r.results.front().counter("ranks"), 16);
  EXPECT_DOUBLE_EQ(r.results.front().seconds, 90.01e-6);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_NE(r.notes[0].find("16 GPUs of 2 hosts (inter)"), std::string::npos);
  EXPECT_NE(r.notes[1].find("2 rows of size 0 left out"), std::string::npos);
  // A multi-host NVLink domain is the intra level: --link says so.
  EXPECT_EQ(read("all_gather_2hosts.txt", NcclTestsOptions{std::nullopt, "intra"}).results.front().parts[2], "intra");
}

TEST(NcclTests, ReduceScatterIsInferredFromTheBusBandwidthRatioWithoutAProgramLine) {
  // nccl-tests 2.13: no "Collective test starting" line; redop sum, root -1 on 8 ranks: busbw/algbw = 7/8 is
  // reduce_scatter (all_reduce 7/4, sendrecv 1).
  const auto r = read("reduce_scatter_8gpu.txt");
  ASSERT_EQ(r.results.size(), 20u);
  // --collective is for files that do not decide: this one does (so one call can pass a sendrecv file that needs it).
  EXPECT_EQ(read("reduce_scatter_8gpu.txt", named(Collective::send_recv)).results[0].parts[0], "reduce_scatter");
  EXPECT_EQ(r.results.front().name, "reduce_scatter/nccl-tests/intra/float/ranks:8/bytes:1024");
  EXPECT_DOUBLE_EQ(r.results.back().seconds, 1392.2e-6);  // 2.13 printed %7.1f from 100 us
}

TEST(NcclTests, SendRecvBefore213NeedsTheCollectiveNamed) {
  // No redop column: sendrecv_perf or all_gather_perf (and others); the file cannot say which.
  EXPECT_EQ(field_of("sendrecv_2gpu.txt"), "sendrecv_2gpu.txt");
  const auto r = read("sendrecv_2gpu.txt", named(Collective::send_recv));
  ASSERT_EQ(r.results.size(), 21u);
  EXPECT_EQ(r.results.front().name, "send_recv/nccl-tests/intra/float/ranks:2/bytes:1024");
  EXPECT_DOUBLE_EQ(r.results.back().seconds, 2906.0e-6);
  // Named wrong, the ratio check refuses it: all_gather on 2 ranks has busbw = algbw / 2, the file busbw = algbw.
  try {
    read("sendrecv_2gpu.txt", named(Collective::all_gather));
    FAIL() << "all_gather does not fit the file";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "sendrecv_2gpu.txt:10");
    EXPECT_NE(std::string(e.what()).find("does not fit all_gather on 2 ranks (busbw = 0.5 x algbw)"),
              std::string::npos);
  }
}

TEST(NcclTests, MalformedFilesNameTheFileAndTheLine) {
  // Cut in the middle of a row.
  EXPECT_EQ(field_of("all_reduce_truncated.txt"), "all_reduce_truncated.txt:31");
  // The in-place #wrong of one row is 12.
  EXPECT_EQ(field_of("all_reduce_wrong.txt"), "all_reduce_wrong.txt:33");
  try {
    read("all_reduce_wrong.txt");
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(),
                 "all_reduce_wrong.txt:33: in-place #wrong=12: NCCL returned wrong data, so the results are "
                 "refused");
  }
  // Only the table was kept.
  EXPECT_EQ(field_of("all_reduce_no_header.txt"), "all_reduce_no_header.txt");
}

// A small all_reduce_perf run on 4 ranks in nccl-tests 2.19's layout, edited by the tests below.
const std::string kHead =
    "# Collective test starting: all_reduce_perf\n"
    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 1 iters: 20\n"
    "#  Rank  0 Group  0 Pid  100 on host-a device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid  101 on host-a device  1 [0000:2a:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  2 Group  0 Pid  102 on host-a device  2 [0000:3a:00] NVIDIA H100 80GB HBM3\n"
    "#  Rank  3 Group  0 Pid  103 on host-a device  3 [0000:5d:00] NVIDIA H100 80GB HBM3\n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  "
    "#wrong\n";
const std::string kRows =
    "     1048576        262144     float     sum      -1    10.00  104.86  157.29       0"
    "    10.00  104.86  157.29       0\n"
    "     2097152        524288     float     sum      -1    18.00  116.51  174.76       0"
    "    18.00  116.51  174.76       0\n"
    "     4194304       1048576     float     sum      -1    34.00  123.36  185.04       0"
    "    34.00  123.36  185.04       0\n";
const std::string kFoot = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 172.36\n";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(NcclTests, TheSmallRunReads) {
  const auto r = parse_nccl_tests(kHead + kRows + kFoot, "f.txt", {});
  ASSERT_EQ(r.results.size(), 3u);
  EXPECT_DOUBLE_EQ(r.results[1].seconds, 18e-6);
  // Without its program line, 4 ranks of a reduction: all_reduce is the one whose factor (1.5) fits.
  const auto inferred = parse_nccl_tests(
      replaced(kHead, "# Collective test starting: all_reduce_perf\n", "") + kRows + kFoot, "f.txt", {});
  EXPECT_EQ(inferred.results[0].parts[0], "all_reduce");
}

TEST(NcclTests, PerIterationColumnsAndTimestampsAreFoundByName) {
  // nccl-tests -I 1 adds i_min i_max i_p99 i_cv% after each #wrong; -T a timestamp (two fields) after the row.
  const std::string text =
      "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 1048576 step: 2(factor)\n"
      "#  Rank  0 Group  0 Pid  100 on host-a device  0 [0000:18:00] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid  100 on host-a device  1 [0000:2a:00] NVIDIA H100 80GB HBM3\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max"
      "    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv% timestamp\n"
      "     1048576        262144     float     sum      -1    10.00  104.86  104.86       0     9.80    10.40"
      "    10.40     1.20    12.00   87.38   87.38       0    11.00    13.00    13.00     4.00 2026-01-02 03:04:05\n"
      "     2097152        524288     float     sum      -1    18.00  116.51  116.51       0    17.80    18.40"
      "    18.40     1.10    18.00  116.51  116.51       0    17.90    18.30    18.30     0.90 2026-01-02 03:04:06\n"
      "# Out of bounds values : 0 OK\n";
  const auto r = parse_nccl_tests(text, "f.txt", named(Collective::all_reduce));
  ASSERT_EQ(r.results.size(), 2u);
  EXPECT_DOUBLE_EQ(r.results[0].seconds, 10e-6);  // out-of-place time, not i_min or the in-place 12.00
  EXPECT_DOUBLE_EQ(r.results[0].counter("ranks"), 2);
}

TEST(NcclTests, RefusedRunsSayWhy) {
  const std::string ok = kHead + kRows + kFoot;
  EXPECT_EQ(error_of(kHead + kRows),
            "f.txt: no \"# Out of bounds values\" line after the table (line 10 is the last): the run did not finish "
            "or the output is cut short");
  EXPECT_EQ(error_of(replaced(ok, "values : 0 OK", "values : 3 FAILED")),
            "f.txt:11: 3 values out of bounds: NCCL returned wrong data, so the times are refused");
  EXPECT_EQ(error_of(ok + ok), "f.txt:14: a second run starts here (the first on line 2): one run per file");
  EXPECT_EQ(error_of(replaced(ok, "     time   algbw", "  cputime   algbw")),
            "f.txt:7: the table reports cputime (nccl-tests -C 1), the host's launch time; run without -C");
  EXPECT_EQ(error_of(replaced(ok, "all_reduce_perf", "alltoall_perf")),
            "f.txt:1: alltoall_perf measures a collective the cost model does not use; calibrate from "
            "all_reduce_perf, all_gather_perf, reduce_scatter_perf or sendrecv_perf");
  // --collective is for output that does not name its program; a program line wins.
  EXPECT_EQ(parse_nccl_tests(ok, "f.txt", named(Collective::reduce_scatter)).results[0].parts[0], "all_reduce");
  EXPECT_EQ(error_of(replaced(ok, "float     sum      -1    18.00", "half      sum      -1    18.00")),
            "f.txt:9: type half after float: one type per file (run nccl-tests with -d TYPE)");
  EXPECT_EQ(error_of(replaced(ok, "    10.00  104.86", "    -1.00  104.86")),
            "f.txt:8: out-of-place time=\"-1.00\" must be a finite number of microseconds in (0, 1e+15]");
  // A device line lost: 3 ranks, where all_reduce's busbw would be 4/3 x algbw, not the 1.5 x printed.
  EXPECT_EQ(error_of(replaced(
                ok, "#  Rank  3 Group  0 Pid  103 on host-a device  3 [0000:5d:00] NVIDIA H100 80GB HBM3\n", "")),
            "f.txt:7: busbw/algbw = 157.29/104.86 does not fit all_reduce on 3 ranks (busbw = 1.333 x algbw): the "
            "collective or the device lines do not describe this table");
  EXPECT_EQ(error_of(replaced(ok, "#  Rank  3", "#  Rank  2")),
            "f.txt:6: rank 2 again or out of 0..3: the device lines must name each rank once");
  EXPECT_EQ(error_of(replaced(ok, "Pid  103 on host-a device", "Pid  103 device")),
            "f.txt:6: a device line must read \"#  Rank R Group G Pid P on HOST device D [BUS] NAME\"");
  EXPECT_NE(error_of("hello\n").find("f.txt: no \"# nThread T nGpus G ...\" header line: not nccl-tests output"),
            std::string::npos);
}

TEST(NcclTests, UncheckedRowsAreReadWithANote) {
  const std::string unchecked =
      replaced(replaced(kHead + kRows + kFoot, "157.29       0    10.00", "157.29     N/A    10.00"),
               "104.86  157.29       0\n", "104.86  157.29     N/A\n");
  const auto r = parse_nccl_tests(unchecked, "f.txt", {});
  ASSERT_EQ(r.results.size(), 3u);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[1], "f.txt: 1 rows not data-checked (#wrong N/A: nccl-tests -c 0)");
}

// Issue 18, point 4: a row the reader cannot read was skipped as if it were not a row (30 sizes fitted of 31, no
// word). Every line shaped like a row is now read as one, and refused when it cannot be, naming the line.
TEST(NcclTests, RowsThatCannotBeReadAreRefusedNotSkipped) {
  const std::string ok = kHead + kRows + kFoot;
  const std::string second = "     2097152        524288     float     sum      -1    18.00";
  EXPECT_EQ(error_of(replaced(ok, second, "          -8        524288     float     sum      -1    18.00")),
            "f.txt:9: size=\"-8\" is not a number of bytes");
  EXPECT_EQ(error_of(replaced(ok, second, "         nan        524288     float     sum      -1    18.00")),
            "f.txt:9: size=\"nan\" is not a number of bytes");
  EXPECT_EQ(error_of(replaced(ok, second, "        1e30        524288     float     sum      -1    18.00")),
            "f.txt:9: size=\"1e30\" is not a number of bytes");
  // Not a number as strtod reads it, but a row by its shape (13 fields, a type name third).
  EXPECT_EQ(error_of(replaced(ok, second, "        0x10        524288     float     sum      -1    18.00")),
            "f.txt:9: size=\"0x10\" is not a number of bytes");
  EXPECT_EQ(error_of(replaced(ok, second, "     2097152           nan     float     sum      -1    18.00")),
            "f.txt:9: count=\"nan\" is not a number of elements");
  // size = count x 4 bytes (float) for all_reduce: 2097152 is not 524289 x 4.
  EXPECT_EQ(error_of(replaced(ok, second, "     2097152        524289     float     sum      -1    18.00")),
            "f.txt:9: size=2097152 is neither count=524289 x 4 bytes (float) nor that x 4 ranks: the row is damaged");
  // A count per rank (size = n x count x 4) is all_gather's or reduce_scatter's way, not all_reduce's.
  EXPECT_EQ(error_of(replaced(ok, second, "     2097152        131072     float     sum      -1    18.00")),
            "f.txt:9: size=2097152 is n ranks x count x type bytes, but all_reduce prints size = count x type bytes: "
            "the table is not all_reduce's output");
  EXPECT_EQ(error_of(replaced(ok, "float     sum      -1    18.00", "floaty    sum      -1    18.00")),
            "f.txt:9: type=\"floaty\" is not an nccl-tests type (int8, uint8, int32, uint32, int64, uint64, half, "
            "float, double, bfloat16, f8e4m3, f8e5m2)");
  // More values than the header has columns (13 here).
  EXPECT_EQ(error_of(replaced(ok, "116.51  174.76       0\n", "116.51  174.76       0     7\n")),
            "f.txt:9: a row of 14 fields where the column header (line 7) has 13: more values than columns");
  EXPECT_EQ(error_of(replaced(ok, "    18.00  116.51  174.76       0\n", "\n")),
            "f.txt:9: a row of 9 fields where the column header (line 7) has 13: the table is cut short");
  EXPECT_EQ(error_of(replaced(ok, "    18.00  116.51  174.76       0\n", "   nan  116.51  174.76       0\n")),
            "(no error)");  // the in-place time is not used
  EXPECT_EQ(error_of(replaced(ok, "    10.00  104.86  157.29       0    10.00",
                              "      nan  104.86  157.29       0    "
                              "10.00")),
            "f.txt:8: out-of-place time=\"nan\" must be a finite number of microseconds in (0, 1e+15]");
  // Lines that are no rows between the header and the footer are still passed over.
  const auto with_info =
      parse_nccl_tests(replaced(ok, kRows,
                                kRows + "host-a:100:100 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
                                        "10-0-0-1:100:100 [0] NCCL INFO comm 0x55 rank 0 nRanks 4\n"),
                       "f.txt", {});
  EXPECT_EQ(with_info.results.size(), 3u);
}

// With the flag, such rows are left out and counted, and the fit has fewer sizes: it says so.
TEST(NcclTests, UnreadableRowsAreSkippedWithACountedNoteOnRequest) {
  NcclTestsOptions skip;
  skip.skip_unreadable_rows = true;
  const std::string text = replaced(
      replaced(kHead + kRows + kFoot, "     2097152        524288     float", "          -8        524288     float"),
      "     4194304       1048576     float", "         nan       1048576     float");
  const auto r = parse_nccl_tests(text, "f.txt", skip);
  ASSERT_EQ(r.results.size(), 1u);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_NE(r.notes[0].find(", float, 1 sizes,"), std::string::npos) << r.notes[0];
  EXPECT_EQ(r.notes[1],
            "f.txt: 2 table rows that could not be read left out (--skip-unreadable-rows); the first, line 9: "
            "size=\"-8\" is not a number of bytes");
  // Wrong data is never skipped.
  EXPECT_EQ(error_of(replaced(text, "157.29       0\n", "157.29       3\n"), skip),
            "f.txt:8: in-place #wrong=3: NCCL returned wrong data, so the results are refused");
}

// `zeropp calibrate --collective` is a statement: a file whose program line or columns say otherwise is refused.
TEST(NcclTests, ACollectiveThatContradictsTheFileIsAnError) {
  NcclTestsOptions claim = named(Collective::all_gather);
  claim.check_collective = true;
  EXPECT_EQ(error_of(kHead + kRows + kFoot, claim),
            "f.txt:1: --collective all_gather contradicts the program line: this is all_reduce_perf's output");
  // Without the program line, the busbw/algbw ratio of 1.5 on 4 ranks fits all_reduce alone.
  claim.collective = Collective::reduce_scatter;
  EXPECT_EQ(error_of(replaced(kHead, "# Collective test starting: all_reduce_perf\n", "") + kRows + kFoot, claim),
            "f.txt:6: --collective reduce_scatter contradicts the table: the busbw/algbw of every row fits "
            "all_reduce on 4 ranks and no other reduction");
  claim.collective = Collective::all_reduce;  // agreeing is fine
  EXPECT_EQ(error_of(kHead + kRows + kFoot, claim), "(no error)");
}

TEST(ResultsFile, DetectsTheFormatAndRefusesAnotherKindOfDevice) {
  const auto nccl = load_results(data("all_reduce_8gpu.txt"), {});
  EXPECT_EQ(nccl.results.size(), 31u);
  const auto json = load_results(std::string(ZEROPP_SOURCE_DIR) + "/results/loop/bench.json", {});
  EXPECT_EQ(json.device, Device::cpu);
  const ClusterSpec gpu = load_cluster("dgx-h100");
  ClusterSpec cpu = gpu;
  cpu.name = "a-cpu";
  cpu.device = Device::cpu;
  EXPECT_NO_THROW(check_device(nccl, "ar.txt", gpu));
  EXPECT_NO_THROW(check_device(json, "bench.json", cpu));
  try {
    check_device(nccl, "ar.txt", cpu);
    FAIL() << "nccl-tests onto a CPU profile";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "ar.txt");
    EXPECT_STREQ(e.what(),
                 "ar.txt: nccl-tests results of 8 GPUs (NVIDIA H100 80GB HBM3) cannot calibrate the base "
                 "cluster \"a-cpu\" (device: cpu); calibrate them on a gpu cluster");
  }
  EXPECT_THROW(check_device(json, "bench.json", gpu), SpecError);
  BenchResults unknown;  // Google Benchmark JSON without zeropp-bench's context
  EXPECT_NO_THROW(check_device(unknown, "x.json", cpu));
}

// The four files together calibrate the links they measured, with the alpha and beta they were written with
// (make_files.py): one code path after parsing, the same fit as zeropp-bench's collectives.
TEST(ResultsFile, CalibrationRecoversTheAlphaBetaOfTheFiles) {
  BenchResults all;
  for (const char* f : {"all_reduce_8gpu.txt", "all_gather_2hosts.txt", "reduce_scatter_8gpu.txt"})
    all.append(load_results(data(f), {}));
  all.append(load_results(data("sendrecv_2gpu.txt"), named(Collective::send_recv)));
  const auto c = calibrate(all, load_cluster("dgx-h100"), {});
  struct Expected {
    const char* level;
    const char* collective;
    double alpha_us, beta_gbps;
  };
  // The all_gather ran over 2 hosts of 8: its entry is per GPU, 45 / 8 (host_layout.hpp; the fit scores the run
  // as measured).
  for (const Expected& e : {Expected{"intra", "all_reduce", 1.2, 360}, Expected{"inter", "all_gather", 6.0, 45.0 / 8},
                            Expected{"intra", "reduce_scatter", 1.5, 340}, Expected{"intra", "send_recv", 4.0, 370}}) {
    SCOPED_TRACE(std::string(e.level) + "/" + e.collective);
    const CollectiveFit& fit = c.profile.collectives.at(e.level).at(e.collective);
    EXPECT_NEAR(fit.latency * 1e6, e.alpha_us, 0.01 * e.alpha_us);
    EXPECT_NEAR(fit.bandwidth / 1e9, e.beta_gbps, 0.01 * e.beta_gbps);
  }
  EXPECT_LT(c.worst_held_out_error(), 0.01);
  EXPECT_NEAR(c.profile.intra.bandwidth / 1e9, 370, 3.7);  // the send_recv line is the bare link
}

}  // namespace
}  // namespace zeropp::calibrate
