#pragma once
// Unit conversions between the JSON configs (TFLOP/s, GiB, GB/s, microseconds: the units of spec sheets and
// nccl-tests) and the SI values used inside (FLOP/s, bytes, bytes/s, seconds). Internal to cost_model/spec.
namespace zeropp::detail {

// value_si = json_value * per_unit (kind multiply) or json_value / per_unit (kind divide). Both factors are exact
// doubles, so spec-sheet numbers convert exactly (3.4 us -> the double nearest 3.4e-6).
struct Unit {
  double per_unit;
  bool divide;
};
inline constexpr Unit kTflops{1e12, false};       // TFLOP/s
inline constexpr Unit kGiB{1073741824.0, false};  // GiB = 2^30 bytes
inline constexpr Unit kMiB{1048576.0, false};     // MiB = 2^20 bytes (nvidia-smi's memory.total)
inline constexpr Unit kGBps{1e9, false};          // GB/s = 1e9 bytes/s
inline constexpr Unit kMicroseconds{1e6, true};   // us
inline constexpr Unit kMparams{1e6, false};       // million parameters per second

double from_unit(double json_value, Unit unit);
// The JSON value that converts back to exactly `si` whenever one exists (always for a value read from JSON),
// so from_json(to_json(x)) == x; otherwise the nearest, within one ulp.
double to_unit(double si, Unit unit);

}  // namespace zeropp::detail
