#include "cost_model/options/cli_checks.hpp"

#include <charconv>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "cost_model/spec/printable.hpp"

namespace zeropp::cli_checks {

CLI::Validator number_in(const NumberRange& range) {
  const std::string shown = fmt::format("{}{:g}, {:g}]", range.lo_open ? "(" : "[", range.lo, range.hi);
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return text + " is not a number";
        // strtod also reads hexadecimal ("0x10" = 16, "0x1p4"); a decimal number has no x, inf and nan no digit.
        if (text.find_first_of("xX") != std::string::npos) return text + " is not a decimal number";
        const std::string rule = range_violation(value, range);
        return rule.empty() ? std::string() : text + " " + rule;
      },
      "in " + shown);
}

CLI::Validator integer_in(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ptr != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
          return text + " is not an integer";
        if (ec == std::errc::result_out_of_range || value < lo || value > hi)
          return fmt::format("{} is not in {}..{}", text, lo, hi);
        return std::string();
      },
      fmt::format("in {}..{}", lo, hi));
}

CLI::Validator output_path() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "the output path is empty" : std::string(); }, "");
}

int parse(CLI::App& app, int argc, char** argv, std::string_view program, std::FILE* errors) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return errors != nullptr ? app.exit(e) : 0;
  } catch (const CLI::CallForAllHelp& e) {
    return errors != nullptr ? app.exit(e) : 0;
  } catch (const CLI::CallForVersion& e) {
    return errors != nullptr ? app.exit(e) : 0;
  } catch (const CLI::ParseError& e) {
    if (errors != nullptr) {
      fmt::print(errors, "{}: error: {} (see --help)\n", program, printable(e.what()));
      std::fflush(errors);
    }
    return 2;
  }
  return -1;
}

}  // namespace zeropp::cli_checks
