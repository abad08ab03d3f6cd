#!/usr/bin/env bash
# The main job on the embedded default: installs what is missing, builds, runs the default study and writes its
# report (results/report.md: verdict, comparison table, criterion, timeline, model vs measurement, figures).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/cost_model/zeropp compare --experiment default
echo
./build/cost_model/zeropp criterion --experiment default --cluster-time
echo
# The project's figures (Debian's python3-matplotlib, from scripts/deps.sh) into results/figures; the report draws
# its own into results/report-figures/ and says so when it cannot.
if ! bash plots/make_all.sh results/figures; then
  echo "run.sh: the figures were not made (see above); the report is written without them" >&2
fi
./build/cost_model/zeropp report --experiment default -o results/report.md
