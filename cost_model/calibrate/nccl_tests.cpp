#include "cost_model/calibrate/nccl_tests.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/printable.hpp"

namespace zeropp::calibrate {
namespace {

using analytic::Collective;

constexpr NumberRange kMicroseconds{0, 1e15};  // a time per operation: positive, finite, below 30 years

using Fields = std::vector<std::string_view>;

Fields split(std::string_view line) {
  Fields out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// mpirun --tag-output writes "[1,0]<stdout>:" before every line of rank 0.
std::string_view strip_mpi_tag(std::string_view line) {
  if (!line.starts_with('[')) return line;
  const auto tag = line.find("]<std");
  if (tag == std::string_view::npos || tag > 24) return line;
  const auto colon = line.find(">:", tag);
  return colon == std::string_view::npos ? line : line.substr(colon + 2);
}

std::optional<long long> whole_number(std::string_view text) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Whether strtod reads all of `text` as a number ("1024", "-8", "nan", "1e30", "0x10"): the first field of a line
// that is meant as a table row, however wrong its number.
bool reads_as_number(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

// Bytes per element of nccl-tests' type names: src/common.cu test_typenames (2.x: int8 .. f8e5m2; 1.x: char,
// int) and src/common.h wordSize().
std::optional<int> type_bytes(std::string_view type) {
  static constexpr std::pair<std::string_view, int> kTypes[] = {
      {"int8", 1},   {"uint8", 1}, {"char", 1},  {"int32", 4},  {"int", 4},      {"uint32", 4}, {"int64", 8},
      {"uint64", 8}, {"half", 2},  {"float", 4}, {"double", 8}, {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1}};
  for (const auto& [name, bytes] : kTypes)
    if (name == type) return bytes;
  return std::nullopt;
}

// A number as nccl-tests prints it ("0.06", "13016.7", "115855", "1.2e+05"), with half a unit of its last
// printed digit: the value nccl-tests computed lies within value +- half_ulp.
struct Printed {
  double value = 0;
  double half_ulp = 0;
};

std::optional<Printed> printed_number(std::string_view text) {
  Printed p;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), p.value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(p.value)) return std::nullopt;
  // Parsed whole, so an 'e' is followed by the exponent's digits (and maybe a sign).
  const auto e = text.find_first_of("eE");
  const std::string_view mantissa = text.substr(0, e);
  const auto dot = mantissa.find('.');
  const long long decimals = dot == std::string_view::npos ? 0 : static_cast<long long>(mantissa.size() - dot - 1);
  long long exponent = 0;
  if (e != std::string_view::npos) exponent = whole_number(text.substr(text[e + 1] == '+' ? e + 2 : e + 1)).value_or(0);
  p.half_ulp = 0.5 * std::pow(10.0, static_cast<double>(exponent - decimals));
  return p;
}

// The columns of the out-of-place or the in-place results: time, algbw, busbw and the check, in this order.
struct Placement {
  std::size_t time = 0;      // index of the time field in a row
  bool counts_wrong = true;  // "#wrong" (nccl-tests 2.13 on): wrong elements; "error" (before): largest deviation
};

struct Layout {
  std::size_t line = 0;  // of the column header
  std::optional<std::size_t> redop, root;
  Placement out;
  std::optional<Placement> in;
  std::size_t fields = 0;  // a row has exactly this many: the header's column names (a timestamp takes two fields)
};

struct Row {
  std::size_t line = 0;
  std::string_view size;
  double seconds = 0;
  Printed algbw, busbw;
  bool whole_count = false;     // size = count x type bytes (all_reduce, send_recv)
  bool per_rank_count = false;  // size = count x type bytes x n (all_gather, reduce_scatter: count per rank)
};

struct DeviceLine {
  std::size_t line = 0;
  long long rank = 0;
  std::string_view host;
};

class Reader {
 public:
  Reader(const std::string& source, const NcclTestsOptions& options) : source_(source), options_(options) {}

  BenchResults read(std::string_view text);

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& message) const {
    throw SpecError(fmt::format("{}:{}", source_, line), fmt::format("{}:{}: {}", source_, line, message));
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw SpecError(source_, fmt::format("{}: {}", source_, message));
  }
  // A table row that cannot be read: refused, or with skip_unreadable_rows counted and left out.
  void unreadable(std::size_t line, const std::string& message) {
    if (!options_.skip_unreadable_rows) fail(line, message);
    if (skipped_rows_++ == 0) first_skipped_ = fmt::format("line {}: {}", line, message);
  }
  bool is_row(const Fields& f) const;
  void check_sizes(Collective c) const;

  void header_line(std::size_t line, std::string_view body);
  void device_line(std::size_t line, const Fields& f);
  Placement placement(const Fields& names, std::size_t i, std::size_t line) const;
  void column_header(std::size_t line, const Fields& names);
  void check_wrong(std::string_view value, const Placement& p, bool out_of_place, std::size_t line);
  void row(std::size_t line, const Fields& f);
  void check_complete() const;
  bool ratio_fits(Collective c, const Row& r) const;
  std::optional<Collective> named_by_program() const;
  std::vector<Collective> fitting_reductions() const;
  Collective collective() const;

  const std::string& source_;
  const NcclTestsOptions& options_;
  std::size_t run_line_ = 0;   // "# nThread ..."
  long long per_process_ = 1;  // nThread * nGpus: device lines each process prints
  std::optional<std::pair<std::size_t, std::string>> program_;
  std::vector<DeviceLine> devices_;
  std::string device_name_;
  std::optional<Layout> layout_;
  std::size_t footer_line_ = 0;
  std::string type_, redop_, root_;
  std::vector<Row> rows_;
  mutable bool collective_from_option_ = false;  // set by collective()
  std::size_t empty_rows_ = 0, unchecked_rows_ = 0, last_line_ = 0, skipped_rows_ = 0;
  std::string first_skipped_;
};

void Reader::header_line(std::size_t line, std::string_view body) {
  const Fields f = split(body);
  if (f.empty()) return;
  if (f[0] == "nThread") {
    if (run_line_)
      fail(line, fmt::format("a second run starts here (the first on line {}): one run per file", run_line_));
    run_line_ = line;
    const auto threads = f.size() > 3 && f[2] == "nGpus" ? whole_number(f[1]) : std::nullopt;
    const auto gpus = f.size() > 3 ? whole_number(f[3]) : std::nullopt;
    if (!threads || !gpus || *threads < 1 || *gpus < 1 || *threads > limits::kGpus || *gpus > limits::kGpus)
      fail(line, "the header must read \"# nThread T nGpus G ...\" with T, G >= 1");
    per_process_ = *threads * *gpus;
  } else if (f.size() >= 4 && f[0] == "Collective" && f[1] == "test" && f[2] == "starting:") {
    program_ = {line, std::string(f[3])};
  } else if (f[0] == "Rank") {
    device_line(line, f);
  } else if (f[0] == "size") {
    column_header(line, f);
  } else if (f.size() >= 6 && f[0] == "Out" && f[1] == "of" && f[2] == "bounds" && f[3] == "values") {
    footer_line_ = line;
    const auto wrong = whole_number(f[5]);
    if (!wrong || *wrong < 0) fail(line, "expected \"# Out of bounds values : N OK|FAILED\"");
    if (*wrong > 0)
      fail(line, fmt::format("{} values out of bounds: NCCL returned wrong data, so the times are refused", *wrong));
  }
}

// "#  Rank  0 Group  0 Pid  1234 on node-a01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3" (before 2.13:
// "#   Rank  0 Pid  1234 on node-a01 device  0 [0x18] Tesla V100-SXM2-32GB").
void Reader::device_line(std::size_t line, const Fields& f) {
  std::size_t i = 2;
  if (f.size() > 3 && f[2] == "Group") i = 4;
  const auto rank = f.size() > 1 ? whole_number(f[1]) : std::nullopt;
  if (!rank || f.size() < i + 7 || f[i] != "Pid" || f[i + 2] != "on" || f[i + 4] != "device" ||
      !f[i + 6].starts_with('[')) {
    fail(line, "a device line must read \"#  Rank R Group G Pid P on HOST device D [BUS] NAME\"");
  }
  devices_.push_back({line, *rank, f[i + 3]});
  if (device_name_.empty()) {
    std::string name;
    for (std::size_t k = i + 7; k < f.size(); ++k) {
      if (!name.empty()) name += ' ';
      name += f[k];
    }
    device_name_ = name.empty() ? "GPU" : printable(name);
  }
}

Placement Reader::placement(const Fields& names, std::size_t i, std::size_t line) const {
  if (i < names.size() && names[i] == "cputime")
    fail(line, "the table reports cputime (nccl-tests -C 1), the host's launch time; run without -C");
  if (i + 3 >= names.size() || names[i] != "time" || names[i + 1] != "algbw" || names[i + 2] != "busbw" ||
      (names[i + 3] != "#wrong" && names[i + 3] != "error")) {
    fail(line, "expected the columns time algbw busbw #wrong after size count type [redop] [root]");
  }
  return {i, names[i + 3] == "#wrong"};
}

void Reader::column_header(std::size_t line, const Fields& names) {
  if (layout_)
    fail(line, fmt::format("a second table starts here (the first on line {}): one run per file", layout_->line));
  if (names.size() < 3 || names[1] != "count" || names[2] != "type")
    fail(line, "the column header must begin with size count type");
  Layout l;
  l.line = line;
  std::size_t i = 3;
  if (i < names.size() && names[i] == "redop") l.redop = i++;
  if (i < names.size() && names[i] == "root") l.root = i++;
  l.out = placement(names, i, line);
  for (std::size_t j = i + 4; j < names.size(); ++j) {
    if (names[j] == "time" || names[j] == "cputime") {
      l.in = placement(names, j, line);
      break;
    }
  }
  // nccl-tests -R 1 prints the row's timestamp as "%Y-%m-%d %H:%M:%S" under one column name: two fields.
  l.fields = names.size() + (std::find(names.begin(), names.end(), "timestamp") != names.end() ? 1 : 0);
  layout_ = l;
}

void Reader::check_wrong(std::string_view value, const Placement& p, bool out_of_place, std::size_t line) {
  const char* which = out_of_place ? "out-of-place" : "in-place";
  if (value == "N/A") {  // not checked: -c 0, or sendrecv's in-place column (whose times are not used)
    if (out_of_place) ++unchecked_rows_;
    return;
  }
  const auto v = printed_number(value);
  if (!v)
    fail(line,
         fmt::format("{} {}=\"{}\" is not a number", which, p.counts_wrong ? "#wrong" : "error", printable(value)));
  // Before 2.13 the column held the largest deviation, which a correct reduction may show; the footer counts
  // the failures then.
  if (p.counts_wrong && v->value != 0) {
    fail(line,
         fmt::format("{} #wrong={}: NCCL returned wrong data, so the results are refused", which, printable(value)));
  }
}

// A number first, or the shape of a row: as many fields as the header and a type name third.
bool Reader::is_row(const Fields& f) const {
  if (f.empty()) return false;
  return reads_as_number(f[0]) || (f.size() == layout_->fields && type_bytes(f[2]));
}

void Reader::row(std::size_t line, const Fields& f) {
  const Layout& l = *layout_;
  if (f.size() < l.fields) {
    return unreadable(line, fmt::format("a row of {} fields where the column header (line {}) has {}: the table is "
                                        "cut short",
                                        f.size(), l.line, l.fields));
  }
  if (f.size() > l.fields) {
    return unreadable(line, fmt::format("a row of {} fields where the column header (line {}) has {}: more values "
                                        "than columns",
                                        f.size(), l.line, l.fields));
  }
  auto same = [&](std::string& seen, std::string_view value, const char* column, const char* flag) {
    if (seen.empty()) seen = value;
    if (seen != value) {
      fail(line, fmt::format("{} {} after {}: one {} per file (run nccl-tests with {})", column, printable(value),
                             printable(seen), column, flag));
    }
  };
  if (f[2].find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string_view::npos)
    return unreadable(line, fmt::format("type=\"{}\" is not a type name", printable(f[2])));
  const std::optional<int> element = type_bytes(f[2]);
  if (!element) {
    return unreadable(line, fmt::format("type=\"{}\" is not an nccl-tests type (int8, uint8, int32, uint32, int64, "
                                        "uint64, half, float, double, bfloat16, f8e4m3, f8e5m2)",
                                        printable(f[2])));
  }
  same(type_, f[2], "type", "-d TYPE");
  if (l.redop) same(redop_, f[*l.redop], "redop", "-o OP");
  if (l.root) same(root_, f[*l.root], "root", "-r ROOT");
  check_wrong(f[l.out.time + 3], l.out, true, line);
  if (l.in) check_wrong(f[l.in->time + 3], *l.in, false, line);

  const auto size = whole_number(f[0]);
  if (!size || *size < 0) return unreadable(line, fmt::format("size=\"{}\" is not a number of bytes", printable(f[0])));
  const auto count = whole_number(f[1]);
  if (!count || *count < 0)
    return unreadable(line, fmt::format("count=\"{}\" is not a number of elements", printable(f[1])));
  // Which collective the row is (so which of the two holds) is known once the table is read: check_sizes().
  const auto n = static_cast<unsigned __int128>(std::max<std::size_t>(devices_.size(), 1));
  const unsigned __int128 bytes = static_cast<unsigned __int128>(*count) * static_cast<unsigned>(*element);
  const bool whole_count = bytes == static_cast<unsigned __int128>(*size);
  const bool per_rank_count = bytes * n == static_cast<unsigned __int128>(*size);
  if (!whole_count && !per_rank_count) {
    return unreadable(line, fmt::format("size={} is neither count={} x {} bytes ({}) nor that x {} ranks: the row "
                                        "is damaged",
                                        *size, *count, *element, printable(f[2]), devices_.size()));
  }
  if (*size == 0) {  // all_gather and reduce_scatter below one element per rank: nothing moved
    ++empty_rows_;
    return;
  }
  const auto time = printed_number(f[l.out.time]);
  if (!time || !in_range(time->value, kMicroseconds)) {
    return unreadable(line, fmt::format("out-of-place time=\"{}\" must be a finite number of microseconds in (0, "
                                        "1e+15]",
                                        printable(f[l.out.time])));
  }
  const auto algbw = printed_number(f[l.out.time + 1]), busbw = printed_number(f[l.out.time + 2]);
  if (!algbw || !busbw || algbw->value < 0 || busbw->value < 0)
    return unreadable(line, "out-of-place algbw and busbw must be numbers >= 0 (GB/s)");
  rows_.push_back({line, f[0], time->value * 1e-6, *algbw, *busbw, whole_count, per_rank_count});
}

// size = count x type bytes, times n for the collectives whose count is per rank (src/<collective>.cu's
// GetCollByteCount: all_gather and reduce_scatter print the per-rank count beside the whole buffer).
void Reader::check_sizes(Collective c) const {
  const bool per_rank = c == Collective::all_gather || c == Collective::reduce_scatter;
  for (const Row& r : rows_) {
    if (per_rank ? r.per_rank_count : r.whole_count) continue;
    fail(r.line,
         fmt::format("size={} is {}count x type bytes, but {} prints {}: the table is not {}'s output", r.size,
                     per_rank ? "" : "n ranks x ", analytic::collective_name(c),
                     per_rank ? "the count per rank (size = n x count x type bytes)" : "size = count x type bytes",
                     analytic::collective_name(c)));
  }
}

void Reader::check_complete() const {
  const std::string what = "(nor Google Benchmark JSON, which starts with '{')";
  if (!run_line_) fail("no \"# nThread T nGpus G ...\" header line: not nccl-tests output " + what);
  if (devices_.empty())
    fail("no device lines (\"#  Rank R Group G Pid P on HOST device D [BUS] NAME\"): they give the group size");
  if (!layout_) fail("no column header (\"#  size  count  type  redop  root  time  algbw  busbw  #wrong ...\")");
  if (!footer_line_) {
    fail(
        fmt::format("no \"# Out of bounds values\" line after the table (line {} is the last): the run did not finish "
                    "or the output is cut short",
                    last_line_));
  }
  if (rows_.empty()) fail(fmt::format("the table (line {}) has no row of a size above 0", layout_->line));
}

// Whether busbw / algbw as printed can be busbw_factor(c, n): nccl-tests computes busbw = algbw * factor and
// prints both rounded, so the factor must lie between the ratios of the rounding interval's ends.
bool Reader::ratio_fits(Collective c, const Row& r) const {
  const double factor = analytic::busbw_factor(c, static_cast<int>(devices_.size()));
  if (r.algbw.value - r.algbw.half_ulp <= 0) return true;  // too small to tell
  const double lo = std::max(0.0, r.busbw.value - r.busbw.half_ulp) / (r.algbw.value + r.algbw.half_ulp);
  const double hi = (r.busbw.value + r.busbw.half_ulp) / (r.algbw.value - r.algbw.half_ulp);
  return factor >= lo * (1 - 1e-12) && factor <= hi * (1 + 1e-12);
}

std::optional<Collective> Reader::named_by_program() const {
  if (!program_) return std::nullopt;
  const auto& [line, program] = *program_;
  std::string_view name = program;
  if (const auto slash = name.rfind('/'); slash != std::string_view::npos) name = name.substr(slash + 1);
  name = name.substr(0, name.find("_perf"));
  const auto c = name == "sendrecv" ? std::optional(Collective::send_recv) : analytic::collective_from_name(name);
  if (!c) {
    fail(line, fmt::format("{} measures a collective the cost model does not use; calibrate from all_reduce_perf, "
                           "all_gather_perf, reduce_scatter_perf or sendrecv_perf",
                           printable(program)));
  }
  return c;
}

// A reduction without a root is all_reduce_perf, reduce_scatter_perf or sendrecv_perf (reduce_perf has a root;
// all_gather_perf, alltoall_perf and the rooted ones print "none"); those whose busbw / algbw fits every row.
std::vector<Collective> Reader::fitting_reductions() const {
  std::vector<Collective> fit;
  for (Collective c : {Collective::all_reduce, Collective::reduce_scatter, Collective::send_recv}) {
    bool all = true;
    for (const auto& r : rows_) all = all && ratio_fits(c, r);
    if (all) fit.push_back(c);
  }
  return fit;
}

// The program line; else the columns, where they decide; else --collective. Then every row must fit it.
Collective Reader::collective() const {
  std::optional<Collective> c = named_by_program();
  const bool reduction = layout_->redop && redop_ != "none" && (!layout_->root || root_ == "-1");
  const std::vector<Collective> fit = !c && reduction ? fitting_reductions() : std::vector<Collective>{};
  const auto contradicts = [&](Collective found) {
    return options_.check_collective && options_.collective && *options_.collective != found;
  };
  if (c && contradicts(*c)) {
    fail(program_->first, fmt::format("--collective {} contradicts the program line: this is {}'s output",
                                      analytic::collective_name(*options_.collective), printable(program_->second)));
  }
  if (!c && fit.size() == 1) {
    if (contradicts(fit.front())) {
      fail(layout_->line, fmt::format("--collective {} contradicts the table: the busbw/algbw of every row fits {} "
                                      "on {} ranks and no other reduction",
                                      analytic::collective_name(*options_.collective),
                                      analytic::collective_name(fit.front()), devices_.size()));
    }
    c = fit.front();
  }
  if (!c) {
    c = options_.collective;
    collective_from_option_ = c.has_value();
  }
  const int n = static_cast<int>(devices_.size());
  if (!c) {
    std::string why = layout_->redop
                          ? fmt::format("redop \"{}\" fits all_gather_perf and alltoall_perf", printable(redop_))
                          : "it has no redop column (nccl-tests before 2.13)";
    if (reduction) {
      why = fmt::format("its busbw/algbw fits {} on {} ranks", fit.empty() ? "no collective" : "more than one", n);
    }
    fail(
        fmt::format("the output does not name its program (no \"# Collective test starting:\" line, nccl-tests "
                    "before 2.16.7) and {}: pass --collective all_reduce|all_gather|reduce_scatter|send_recv, or "
                    "add the line \"# Collective test starting: <program>\" (all_gather_perf, sendrecv_perf, ...)",
                    why));
  }
  for (const auto& r : rows_) {
    if (ratio_fits(*c, r)) continue;
    fail(r.line,
         fmt::format("busbw/algbw = {:g}/{:g} does not fit {} on {} ranks (busbw = {:.4g} x algbw): the "
                     "collective or the device lines do not describe this table",
                     r.busbw.value, r.algbw.value, analytic::collective_name(*c), n, analytic::busbw_factor(*c, n)));
  }
  return *c;
}

BenchResults Reader::read(std::string_view text) {
  std::size_t line = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view raw = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line;
    if (raw.ends_with('\r')) raw.remove_suffix(1);
    const std::string_view l = strip_mpi_tag(raw);
    if (l.starts_with('#')) {
      header_line(line, l.substr(1));
      last_line_ = line;
      continue;
    }
    // Rows lie between the column header and the footer; other lines there (NCCL INFO, warnings) are skipped.
    const Fields f = split(l);
    if (layout_ && !footer_line_ && is_row(f)) {
      row(line, f);
      last_line_ = line;
    }
  }
  check_complete();
  const int n = static_cast<int>(devices_.size());
  std::set<long long> ranks;
  for (const auto& d : devices_) {
    if (d.rank < 0 || d.rank >= n || !ranks.insert(d.rank).second)
      fail(d.line,
           fmt::format("rank {} again or out of 0..{}: the device lines must name each rank once", d.rank, n - 1));
  }
  if (n % per_process_ != 0) {
    fail(run_line_, fmt::format("{} device lines, but every process prints nThread*nGpus = {}", n, per_process_));
  }
  if (n < 2) fail(devices_.front().line, "one GPU: a collective on one rank uses no link; run on 2 or more");
  if (n > limits::kGpus) fail(fmt::format("{} device lines exceed the limit of {} GPUs", n, limits::kGpus));

  std::map<std::string_view, int> hosts;  // ranks per host
  for (const auto& d : devices_) ++hosts[d.host];
  int per_host = hosts.begin()->second;  // 0: uneven (calibrate/host_layout.hpp)
  for (const auto& [host, count] : hosts) per_host = count == per_host ? per_host : 0;
  const std::string level = !options_.link.empty() ? options_.link : hosts.size() == 1 ? "intra" : "inter";
  const Collective c = collective();
  check_sizes(c);

  BenchResults out;
  out.device = Device::gpu;
  out.collective_from_option = collective_from_option_;
  out.device_evidence = fmt::format("nccl-tests results of {} GPUs ({})", n, device_name_);
  const std::string prefix = fmt::format("{}/nccl-tests/{}/{}/ranks:{}", analytic::collective_name(c), level, type_, n);
  for (const auto& r : rows_) {
    BenchResult b;
    b.source = source_;
    b.name = fmt::format("{}/bytes:{}", prefix, r.size);
    b.parts = {analytic::collective_name(c), "nccl-tests", level, type_};
    b.args = {{"ranks", std::to_string(n)}, {"bytes", std::string(r.size)}};
    b.seconds = r.seconds;
    b.counters = {{"bytes", static_cast<double>(*whole_number(r.size))},
                  {"ranks", static_cast<double>(n)},
                  {"algbw_GBps", r.algbw.value},
                  {"busbw_GBps", r.busbw.value},
                  {"hosts", static_cast<double>(hosts.size())},
                  {"ranks_per_host", static_cast<double>(per_host)}};
    out.results.push_back(std::move(b));
  }
  out.notes.push_back(fmt::format("{}: nccl-tests {} on {} GPUs of {} host{} ({}{}), {}, {} sizes, out-of-place times",
                                  source_, analytic::collective_name(c), n, hosts.size(), hosts.size() == 1 ? "" : "s",
                                  level, options_.link.empty() ? "" : ", from --link", type_, rows_.size()));
  if (empty_rows_) out.notes.push_back(fmt::format("{}: {} rows of size 0 left out", source_, empty_rows_));
  if (skipped_rows_) {
    out.notes.push_back(
        fmt::format("{}: {} table row{} that could not be read left out (--skip-unreadable-rows); "
                    "the first, {}",
                    source_, skipped_rows_, skipped_rows_ == 1 ? "" : "s", first_skipped_));
  }
  if (unchecked_rows_) {
    out.notes.push_back(
        fmt::format("{}: {} rows not data-checked (#wrong N/A: nccl-tests -c 0)", source_, unchecked_rows_));
  }
  return out;
}

}  // namespace

BenchResults parse_nccl_tests(std::string_view text, const std::string& source, const NcclTestsOptions& options) {
  return Reader(source, options).read(text);
}

}  // namespace zeropp::calibrate
