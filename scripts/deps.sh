#!/usr/bin/env bash
# Installs what Ripwerk needs on this machine: the Debian tools it drives (when missing) and the
# npm packages, then builds. Used by `npm start`, `npm test` and CI.
set -euo pipefail
cd "$(dirname "$0")/.."

# command -> Debian package
declare -A TOOLS=(
  [HandBrakeCLI]=handbrake-cli
  [ffmpeg]=ffmpeg
  [mkvpropedit]=mkvtoolnix
  [dvdauthor]=dvdauthor
  [genisoimage]=genisoimage
  [xorriso]=xorriso
  [lsdvd]=lsdvd
  [dvdbackup]=dvdbackup
  [mosquitto]=mosquitto
  [mosquitto_sub]=mosquitto-clients
  [abcde]=abcde
  [cdparanoia]=cdparanoia
  [flac]=flac
  [mkudffs]=udftools
  [eject]=eject
  [setcd]=setcd
  [udfclient]=udfclient
  [smbclient]=smbclient
  [mount.cifs]=cifs-utils
  [mount.nfs]=nfs-common
)
# The browser test of the web UI drives Debian's Chromium (npm test only; npm start does not need it).
# The storage-mount tests run a throwaway Samba server on loopback.
if [ "${RIPWERK_TEST_DEPS:-}" = 1 ]; then TOOLS[chromium]=chromium; TOOLS[smbd]=samba; fi
# npm run bench compares the file download route with nginx serving the same file (sendfile).
if [ "${RIPWERK_BENCH_DEPS:-}" = 1 ]; then TOOLS[nginx]=nginx-light; fi
missing=()
for cmd in "${!TOOLS[@]}"; do
  if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ]; then missing+=("${TOOLS[$cmd]}"); fi
done
# The two-language test disc renders its subtitles with DejaVu Sans (scripts/make-multilang-dvd-image.sh).
if [ "${RIPWERK_TEST_DEPS:-}" = 1 ] && [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then missing+=(fonts-dejavu-core); fi
# The disc-id tests compare with the reference implementations: libdvdread's DVDDiscID (a small C
# program built with cc against libdvdread-dev), the disc id bd_info (libbluray-bin) gets from libaacs0
# and libdiscid's MusicBrainz disc id (libdiscid-dev).
if [ "${RIPWERK_TEST_DEPS:-}" = 1 ]; then
  if ! command -v cc >/dev/null 2>&1; then missing+=(build-essential); fi
  if ! command -v bd_info >/dev/null 2>&1; then missing+=(libbluray-bin); fi
  if [ ! -f /usr/include/dvdread/dvd_reader.h ]; then missing+=(libdvdread-dev); fi
  if ! compgen -G '/usr/lib/*/libaacs.so.0' >/dev/null && [ ! -f /usr/lib/libaacs.so.0 ]; then missing+=(libaacs0); fi
  # The audio CD disc ids against libdiscid (a C program built against libdiscid-dev); the two-disc
  # album imported by beets as one album.
  if [ ! -f /usr/include/discid/discid.h ]; then missing+=(libdiscid-dev); fi
  if ! command -v beet >/dev/null 2>&1; then missing+=(beets); fi
  # AccurateRip checksums are checked against whipper's own implementation (accuraterip-checksum).
  if ! command -v accuraterip-checksum >/dev/null 2>&1; then missing+=(whipper); fi
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run --silent build
