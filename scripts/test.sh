#!/usr/bin/env bash
# npm test: installs what is missing, builds, runs unit then end-to-end tests, ends with one summary line.
#   npm test              all tests
#   npm test -- unit      unit tests only
set -euo pipefail
cd "$(dirname "$0")/.."
RIPWERK_TEST_DEPS=1 bash scripts/deps.sh

kind=${1:-all}
files=()
# Unit tests mirror the source folders (dist/test/unit/coordinator/jobs/…); end-to-end tests are one folder.
if [ "$kind" = all ] || [ "$kind" = unit ]; then mapfile -t -O "${#files[@]}" files < <(find dist/test/unit -name '*.test.js' | sort); fi
if [ "$kind" = all ] || [ "$kind" = e2e ]; then mapfile -t -O "${#files[@]}" files < <(find dist/test/e2e -name '*.test.js' | sort); fi

tap=$(mktemp)
trap 'rm -f "$tap"' EXIT
status=0
node --test --test-concurrency=1 --test-timeout=600000 \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap" \
  "${files[@]}" || status=$?
passed=$(grep -E '^# pass ' "$tap" | awk '{print $3}' | tail -1)
failed=$(grep -E '^# fail ' "$tap" | awk '{print $3}' | tail -1)
# A suite that breaks before its tests run is "not ok" at the top level but not in "# fail".
if [ "$status" -ne 0 ] && [ "${failed:-0}" -eq 0 ]; then failed=$(grep -cE '^not ok ' "$tap" || true); fi
echo "ripwerk tests: ${passed:-0} passed, ${failed:-0} failed"
exit $status
