#!/usr/bin/env bash
# npm run bench: installs what is missing, builds, then measures Ripwerk against the bare tools
# (table on stdout, every sample in .tmp/bench-results.json). Exit 0 even when a figure is over its
# target; 1 when a measure could not be taken.
#   npm run bench                     all measures
#   npm run bench -- latency idle     some of: transcode latency joblist idle download rip memory
set -euo pipefail
cd "$(dirname "$0")/.."
RIPWERK_BENCH_DEPS=1 bash scripts/deps.sh
node dist/scripts/bench.js "$@"
