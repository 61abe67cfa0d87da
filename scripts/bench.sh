#!/usr/bin/env bash
# npm run bench: installs what is missing, builds, then measures Ripwerk against the bare tools.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
node dist/scripts/bench.js
