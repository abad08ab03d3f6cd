#pragma once
// What loading a config says without failing: a warning (a value that is valid but implausible, such as a NIC
// rate that equals a Gb/s figure) or a note (a choice the loader made that the user should know, such as the
// sequence length taken from a HuggingFace config). One line each, naming the file and the field. They go to a
// sink, by default stderr as "zeropp: warning: ..." / "zeropp: note: ..."; tests install their own to see them.
#include <functional>
#include <string>
#include <string_view>

namespace zeropp {

enum class DiagnosticKind { warning, note };

using DiagnosticSink = std::function<void(DiagnosticKind, const std::string& message)>;

void warn(const std::string& message);
void note(const std::string& message);

// Installs `sink` (an empty one restores the stderr default) and returns the one it replaces.
DiagnosticSink set_diagnostic_sink(DiagnosticSink sink);

// "warning" or "note".
std::string_view to_string(DiagnosticKind kind);

}  // namespace zeropp
