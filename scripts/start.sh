#!/usr/bin/env bash
# npm start: installs what is missing, builds, and runs the coordinator (API + embedded MQTT broker)
# together with an agent for this host. Without configuration everything lives under ./.data:
#   .data/drive   an image drive: put a disc image (.iso, or a folder with VIDEO_TS/BDMV) here
#   .data/media   MEDIA_ROOT, where finished titles land
# Any variable of the README's configuration table overrides these defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh

data="$PWD/.data"
export DATA_DIR="${DATA_DIR:-$data/state}"
export MEDIA_ROOT="${MEDIA_ROOT:-$data/media}"
export RAW_DIR="${RAW_DIR:-$data/raw}"
export DRIVES="${DRIVES:-image:$data/drive}"
mkdir -p "$DATA_DIR" "$MEDIA_ROOT" "$RAW_DIR"
if [[ "$DRIVES" == image:* ]]; then mkdir -p "${DRIVES#image:}"; fi
# The same memory settings as the systemd units: see systemd/ripwerk.service.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-131072}"
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-131072}"
exec node --max-semi-space-size=2 dist/coordinator/cli-all-in-one.js
