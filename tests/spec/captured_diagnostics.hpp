#pragma once
// CapturedDiagnostics: while in scope, the warnings and notes that loading configs raises (diagnostics.hpp) are
// collected as "warning: ..." / "note: ..." lines instead of printed.
#include <string>
#include <utility>
#include <vector>

#include "cost_model/spec/diagnostics.hpp"

namespace zeropp {

class CapturedDiagnostics {
 public:
  CapturedDiagnostics()
      : previous_(set_diagnostic_sink([this](DiagnosticKind kind, const std::string& message) {
          lines_.push_back(std::string(to_string(kind)) + ": " + message);
        })) {}
  ~CapturedDiagnostics() { set_diagnostic_sink(std::move(previous_)); }
  CapturedDiagnostics(const CapturedDiagnostics&) = delete;
  CapturedDiagnostics& operator=(const CapturedDiagnostics&) = delete;

  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::vector<std::string> lines_;
  DiagnosticSink previous_;
};

}  // namespace zeropp
