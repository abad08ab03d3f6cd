#include "cost_model/spec/diagnostics.hpp"

#include <iostream>
#include <utility>

#include "cost_model/spec/printable.hpp"

namespace zeropp {
namespace {

void to_stderr(DiagnosticKind kind, const std::string& message) {
  // printable(): a file name with a newline or an escape sequence must not reach the terminal raw.
  std::cerr << "zeropp: " << to_string(kind) << ": " << printable(message) << "\n";
}

DiagnosticSink& sink() {
  static DiagnosticSink current = to_stderr;
  return current;
}

}  // namespace

std::string_view to_string(DiagnosticKind kind) { return kind == DiagnosticKind::warning ? "warning" : "note"; }

void warn(const std::string& message) { sink()(DiagnosticKind::warning, message); }
void note(const std::string& message) { sink()(DiagnosticKind::note, message); }

DiagnosticSink set_diagnostic_sink(DiagnosticSink next) {
  DiagnosticSink previous = std::move(sink());
  sink() = next ? std::move(next) : DiagnosticSink(to_stderr);
  return previous;
}

}  // namespace zeropp
