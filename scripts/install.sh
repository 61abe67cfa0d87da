#!/usr/bin/env bash
# Installs Ripwerk on a Debian host from this checkout and runs it as a systemd service: the Debian
# tools, Node.js 20.19+ when the system's is missing or older, the service user, the app in
# /opt/ripwerk, the state and media folders, the environment file in /etc/ripwerk and the unit,
# which it enables and starts. Running it again changes only what differs and says so.
# docs/install.md describes every step and how to remove Ripwerk again.
#
# For tests and packaging every path it writes is below RIPWERK_ROOT (default /), the app comes from
# RIPWERK_SRC (default: this checkout), and the system commands can be replaced through APT_GET,
# APT_CACHE, DPKG_QUERY, SYSTEMCTL, GETENT, GROUPADD, USERADD, USERMOD, ID, CHOWN, STAT, RUNUSER,
# NPM, NODE, CURL, DEBCONF_SET_SELECTIONS, DPKG_RECONFIGURE and MAKE; MakeMKV's sources come from
# MAKEMKV_DOWNLOAD_BASE.
set -euo pipefail
umask 022

usage() {
  cat <<'EOF'
Usage: sudo bash scripts/install.sh [MODE] [OPTIONS]

Modes:
  (none)                     all-in-one: coordinator, broker and this host's agent (ripwerk.service)
  --coordinator              coordinator and broker only, no drives or encoder (ripwerk-coordinator.service)
  --agent                    agent only, for another host with drives or an encoder (ripwerk-agent.service);
                             needs --coordinator-url

Options for --agent:
  --coordinator-url URL      the coordinator's broker, mqtt://HOST:1883 (written as MQTT_URL)
  --broker-secret SECRET     the coordinator's broker secret (written as RIPWERK_BROKER_SECRET);
                             on the coordinator: sudo cat /var/lib/ripwerk/broker-secret
  --broker-secret-file FILE  the same, read from the first line of FILE (keeps it out of `ps`)
  --mqtt-username USER       the agent's own MQTT user (written as MQTT_USERNAME); better than the
                             broker secret: curl -X POST http://<coordinator>:8080/api/workers/<name>/credentials
  --mqtt-password-file FILE  its password, the first line of FILE (written as MQTT_PASSWORD)

Options for hosts with drives (all-in-one and --agent):
  --with-libdvdcss           enable Debian's contrib component and install libdvd-pkg, which builds
                             libdvdcss: the open backend then reads CSS-protected DVDs
  --with-makemkv [VERSION]   download MakeMKV's sources (the newest version, or VERSION such as
                             1.17.8) from makemkv.com, build and install them (Blu-ray, UHD, and
                             every DVD); needs --accept-makemkv-eula for its closed part
  --accept-makemkv-eula      accept MakeMKV's licence (src/eula_en_linux.txt in makemkv-bin)

Options for the coordinator (all-in-one and --coordinator):
  --with-mounts              let the service mount NAS shares itself (storage page): installs the
                             drop-in systemd/ripwerk-mounts.conf, see docs/install.md

  -h, --help                 this text

Safe to run again: it changes only what differs, restarts the service after a change, and never
overwrites an edited /etc/ripwerk/*.env (only an agent's MQTT_URL and secret follow the options).
See docs/install.md.
EOF
}

die() {
  echo "install.sh: $*" >&2
  exit 1
}
usage_error() {
  echo "install.sh: $*" >&2
  echo "See: bash scripts/install.sh --help" >&2
  exit 2
}

MODE=''
COORDINATOR_URL=''
BROKER_SECRET=''
WITH_LIBDVDCSS=0
WITH_MAKEMKV=0
MAKEMKV_VERSION=''
ACCEPT_MAKEMKV_EULA=0
WITH_MOUNTS=0
MQTT_USER=''
MQTT_PASS=''
need_value() { if [ $# -lt 2 ] || [ -z "$2" ]; then usage_error "$1 needs a value"; fi; }
while [ $# -gt 0 ]; do
  case "$1" in
    --agent | --coordinator)
      [ -z "$MODE" ] || [ "$MODE" = "${1#--}" ] || usage_error "choose one of --agent and --coordinator"
      MODE=${1#--}
      ;;
    --coordinator-url) need_value "$@"; COORDINATOR_URL=$2; shift ;;
    --coordinator-url=*) COORDINATOR_URL=${1#*=} ;;
    --broker-secret) need_value "$@"; BROKER_SECRET=$2; shift ;;
    --broker-secret=*) BROKER_SECRET=${1#*=} ;;
    --broker-secret-file)
      need_value "$@"
      [ -r "$2" ] || usage_error "cannot read the broker secret file $2"
      IFS= read -r BROKER_SECRET <"$2" || [ -n "$BROKER_SECRET" ] || usage_error "the broker secret file $2 is empty"
      shift
      ;;
    --with-libdvdcss) WITH_LIBDVDCSS=1 ;;
    --with-makemkv)
      WITH_MAKEMKV=1
      if [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+(\.[0-9]+)+$ ]]; then MAKEMKV_VERSION=$2; shift; fi
      ;;
    --with-makemkv=*) WITH_MAKEMKV=1; MAKEMKV_VERSION=${1#*=} ;;
    --accept-makemkv-eula) ACCEPT_MAKEMKV_EULA=1 ;;
    --with-mounts) WITH_MOUNTS=1 ;;
    --mqtt-username) need_value "$@"; MQTT_USER=$2; shift ;;
    --mqtt-username=*) MQTT_USER=${1#*=} ;;
    --mqtt-password-file)
      need_value "$@"
      [ -r "$2" ] || usage_error "cannot read the MQTT password file $2"
      IFS= read -r MQTT_PASS <"$2" || [ -n "$MQTT_PASS" ] || usage_error "the MQTT password file $2 is empty"
      shift
      ;;
    -h | --help) usage; exit 0 ;;
    *) usage_error "unknown option $1" ;;
  esac
  shift
done
MODE=${MODE:-all}
if [ "$MODE" = agent ]; then
  [ -n "$COORDINATOR_URL" ] || usage_error "--agent needs --coordinator-url mqtt://<coordinator host>:1883 (the coordinator's broker)"
  [[ "$COORDINATOR_URL" =~ ^mqtts?://[^/[:space:]]+/?$ ]] || usage_error "--coordinator-url must look like mqtt://host:1883, got \"$COORDINATOR_URL\""
  COORDINATOR_URL=${COORDINATOR_URL%/}
  # systemd reads the env file with its own quoting rules: a plain token is the safe form.
  BROKER_SECRET=$(printf '%s' "$BROKER_SECRET" | tr -d '\r' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
  if [ -n "$BROKER_SECRET" ] && ! [[ "$BROKER_SECRET" =~ ^[A-Za-z0-9._~+/=-]+$ ]]; then
    usage_error "--broker-secret may hold letters, digits and . _ ~ + / = - only (the generated one does)"
  fi
  MQTT_PASS=$(printf '%s' "$MQTT_PASS" | tr -d '\r' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
  if [ -n "$MQTT_USER" ] || [ -n "$MQTT_PASS" ]; then
    [ -n "$MQTT_USER" ] && [ -n "$MQTT_PASS" ] || usage_error "--mqtt-username and --mqtt-password-file go together"
    [[ "$MQTT_USER" =~ ^[A-Za-z0-9._@-]+$ ]] || usage_error "--mqtt-username may hold letters, digits and . _ @ - only"
    [[ "$MQTT_PASS" =~ ^[A-Za-z0-9._~+/=-]+$ ]] || usage_error "the MQTT password may hold letters, digits and . _ ~ + / = - only (an issued one does)"
  fi
elif [ -n "$COORDINATOR_URL" ] || [ -n "$BROKER_SECRET" ] || [ -n "$MQTT_USER" ] || [ -n "$MQTT_PASS" ]; then
  usage_error "--coordinator-url, --broker-secret and --mqtt-username go with --agent"
fi
if [ "$MODE" = coordinator ] && { [ "$WITH_LIBDVDCSS" = 1 ] || [ "$WITH_MAKEMKV" = 1 ]; }; then
  usage_error "--with-libdvdcss and --with-makemkv are for the host with the drives (all-in-one or --agent), not --coordinator"
fi
if [ "$MODE" = agent ] && [ "$WITH_MOUNTS" = 1 ]; then
  usage_error "--with-mounts goes with the host that runs the coordinator (all-in-one or --coordinator): the coordinator mounts the shares"
fi
if [ -n "$MAKEMKV_VERSION" ] && ! [[ "$MAKEMKV_VERSION" =~ ^[0-9]+(\.[0-9]+)+$ ]]; then
  usage_error "--with-makemkv takes a version such as 1.17.8, got \"$MAKEMKV_VERSION\""
fi
if [ "$ACCEPT_MAKEMKV_EULA" = 1 ] && [ "$WITH_MAKEMKV" = 0 ]; then usage_error "--accept-makemkv-eula goes with --with-makemkv"; fi

ROOT=${RIPWERK_ROOT:-/}
ROOT=${ROOT%/}
SRC=${RIPWERK_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
APT_GET=${APT_GET:-apt-get}
APT_CACHE=${APT_CACHE:-apt-cache}
DPKG_QUERY=${DPKG_QUERY:-dpkg-query}
SYSTEMCTL=${SYSTEMCTL:-systemctl}
GETENT=${GETENT:-getent}
GROUPADD=${GROUPADD:-groupadd}
USERADD=${USERADD:-useradd}
USERMOD=${USERMOD:-usermod}
ID=${ID:-id}
CHOWN=${CHOWN:-chown}
STAT=${STAT:-stat}
RUNUSER=${RUNUSER:-runuser}
NPM=${NPM:-npm}
NODE=${NODE:-node}
CURL=${CURL:-curl}
DEBCONF_SET_SELECTIONS=${DEBCONF_SET_SELECTIONS:-debconf-set-selections}
DPKG_RECONFIGURE=${DPKG_RECONFIGURE:-dpkg-reconfigure}
MAKE=${MAKE:-make}
NODE_VERSION=${NODE_VERSION:-20.20.2}
MAKEMKV_DOWNLOAD_BASE=${MAKEMKV_DOWNLOAD_BASE:-https://www.makemkv.com/download}
MAKEMKV_DOWNLOAD_BASE=${MAKEMKV_DOWNLOAD_BASE%/}

if [ -z "$ROOT" ] && [ "$(id -u)" -ne 0 ]; then die "run it as root: sudo bash $0 [options]"; fi
if [ ! -f "$SRC/package.json" ] || [ ! -d "$SRC/systemd" ]; then die "$SRC is not a Ripwerk checkout (no package.json or systemd/)"; fi

case "$MODE" in
  all) UNIT=ripwerk.service; ENV_NAME=ripwerk.env ;;
  coordinator) UNIT=ripwerk-coordinator.service; ENV_NAME=coordinator.env ;;
  agent) UNIT=ripwerk-agent.service; ENV_NAME=agent.env ;;
esac
APP=/opt/ripwerk
ETC=/etc/ripwerk
ENV_FILE=$ETC/$ENV_NAME
UNIT_DIR=/etc/systemd/system
# The units may write only here (StateDirectory=ripwerk, ReadWritePaths=-/srv/media).
UNIT_WRITABLE=(/var/lib/ripwerk /srv/media)

work=$(mktemp -d "${TMPDIR:-/tmp}/ripwerk-install.XXXXXX")
trap 'rm -rf "$work"' EXIT

changes=0
did() {
  echo "  $*"
  changes=$((changes + 1))
}
note() { echo "  note: $*"; }

echo "Installing Ripwerk ($MODE) from $SRC into ${ROOT:-/}"

# --- 1. Debian packages --------------------------------------------------------------------------
apt_updated=0
apt_install() { # packages...
  if [ "$apt_updated" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive "$APT_GET" update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive "$APT_GET" install -y -qq --no-install-recommends "$@"
}
# shellcheck disable=SC2016 # ${Status} is dpkg-query's format, not a shell variable
installed() { "$DPKG_QUERY" -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# The tools the agent drives (capabilities probe, open-DVD ripper, audio CDs, drive status).
# scripts/deps.sh installs more: dvdauthor, genisoimage, xorriso, udftools, udfclient and mosquitto
# only make the test suite's disc images and brokers (a mosquitto service would take port 1883).
packages=()
if [ "$MODE" != coordinator ]; then
  packages+=(handbrake-cli ffmpeg mkvtoolnix lsdvd dvdbackup abcde cdparanoia flac libcdio-utils eject setcd python3)
fi
packages+=(ca-certificates) # npm and the ripper key refresh use https
# --with-mounts: the mount helpers for SMB and NFS, and smbclient for the share list of a NAS.
[ "$WITH_MOUNTS" = 1 ] && packages+=(cifs-utils nfs-common smbclient)
missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install "${missing[@]}"
  did "installed Debian packages: ${missing[*]}"
fi

need_curl() {
  if ! command -v "$CURL" >/dev/null 2>&1; then
    apt_install curl
    did "installed Debian package curl (to download $1)"
  fi
}

# --- 1b. libdvdcss (--with-libdvdcss): Debian's contrib component and libdvd-pkg ---------------------
# libdvd-pkg is in contrib; it downloads the libdvdcss sources from VideoLAN and builds the Debian
# package libdvdcss2 on this host. Its questions are answered beforehand (debconf), then
# dpkg-reconfigure runs the build without asking.
DEB822_SOURCES=/etc/apt/sources.list.d/debian.sources
CLASSIC_SOURCES=/etc/apt/sources.list
# Adds contrib where Debian's own archive is used with main: a URI on debian.org, or a source signed
# with debian-archive-keyring (a mirror); other repositories stay as they are. Prints the result.
contrib_deb822() {
  awk '
    function flush(   i, l) {
      for (i = 1; i <= n; i++) {
        l = buf[i]
        if (debian && l ~ /^Components:/ && l ~ /[ \t]main([ \t]|$)/ && l !~ /[ \t]contrib([ \t]|$)/) { sub(/[ \t]*$/, " contrib", l) }
        print l
      }
      n = 0; debian = 0
    }
    /^[ \t]*$/ { flush(); print; next }
    { buf[++n] = $0; if ($0 ~ /^URIs:.*debian\.org/ || $0 ~ /^Signed-By:.*debian-archive-keyring/) debian = 1 }
    END { flush() }' "$1"
}
contrib_classic() {
  awk '/^[ \t]*deb(-src)?[ \t]/ && /debian\.org|debian-archive-keyring/ && /[ \t]main([ \t]|$)/ && !/[ \t]contrib([ \t]|$)/ { sub(/[ \t]main([ \t]|$)/, " main contrib "); sub(/[ \t]*$/, "") } { print }' "$1"
}
enable_contrib() {
  local f rel t found=0 edited=()
  for rel in "$DEB822_SOURCES" "$CLASSIC_SOURCES"; do
    f=$ROOT$rel
    [ -f "$f" ] || continue
    t=$(mktemp "$work/sources.XXXXXX")
    if [ "$rel" = "$DEB822_SOURCES" ]; then
      grep -Eq '^URIs:.*debian\.org|^Signed-By:.*debian-archive-keyring' "$f" && found=1
      contrib_deb822 "$f" >"$t"
    else
      grep -Eq '^[[:space:]]*deb(-src)?[[:space:]].*(debian\.org|debian-archive-keyring)' "$f" && found=1
      contrib_classic "$f" >"$t"
    fi
    if ! cmp -s "$t" "$f"; then
      cat "$t" >"$f" # keeps the file's owner and mode
      edited+=("$rel")
    fi
  done
  [ "$found" = 1 ] || die "--with-libdvdcss: found no Debian archive (debian.org, or signed with debian-archive-keyring) in $DEB822_SOURCES or $CLASSIC_SOURCES; add the component contrib to your Debian source yourself, then run this again"
  if [ "${#edited[@]}" -gt 0 ]; then
    apt_updated=0 # the new component needs a fresh package list
    did "enabled Debian's contrib component in ${edited[*]}"
  fi
}
if [ "$WITH_LIBDVDCSS" = 1 ]; then
  if installed libdvdcss2; then
    echo "  libdvdcss is installed (libdvdcss2)"
  else
    enable_contrib
    printf '%s\n' 'libdvd-pkg libdvd-pkg/first-install note' 'libdvd-pkg libdvd-pkg/post-invoke_hook-install boolean true' 'libdvd-pkg libdvd-pkg/build boolean true' |
      "$DEBCONF_SET_SELECTIONS"
    installed libdvd-pkg || apt_install libdvd-pkg
    DEBIAN_FRONTEND=noninteractive "$DPKG_RECONFIGURE" libdvd-pkg
    installed libdvdcss2 || die "libdvd-pkg did not build libdvdcss2 (see its output above; it downloads the sources from videolan.org)"
    did "installed libdvdcss (libdvd-pkg built libdvdcss2 on this host; it rebuilds it on upgrades): the open backend now reads CSS-protected DVDs"
  fi
fi

# --- 1c. MakeMKV (--with-makemkv): its sources from makemkv.com, built here ---------------------------
# Two tarballs: makemkv-oss (open source libraries, LGPL) and makemkv-bin (makemkvcon, under MakeMKV's
# own licence, which its Makefile asks to accept; tmp/eula_accepted answers that question).
MAKEMKV_BUILD_DEPS=(build-essential pkg-config libc6-dev libssl-dev libexpat1-dev libavcodec-dev libgl1-mesa-dev qtbase5-dev zlib1g-dev)
MAKEMKV_STAMP=$APP/makemkv-version
makemkv_download() { # name -> the unpacked folder
  local url=$MAKEMKV_DOWNLOAD_BASE/$1.tar.gz
  "$CURL" -fsSL -o "$work/$1.tar.gz" "$url" || die "could not download $url"
  mkdir -p "$work/makemkv"
  tar -xzf "$work/$1.tar.gz" -C "$work/makemkv" --no-same-owner || die "$1.tar.gz from $url is not a readable tarball"
  [ -d "$work/makemkv/$1" ] || die "$1.tar.gz from $url holds no folder $1"
  echo "$work/makemkv/$1"
}
if [ "$WITH_MAKEMKV" = 1 ]; then
  need_curl MakeMKV
  if [ -z "$MAKEMKV_VERSION" ]; then
    page=$("$CURL" -fsSL "$MAKEMKV_DOWNLOAD_BASE/") || die "could not read MakeMKV's download page $MAKEMKV_DOWNLOAD_BASE/ (name a version: --with-makemkv 1.17.8)"
    MAKEMKV_VERSION=$(printf '%s' "$page" | grep -oiE 'makemkv v?[0-9]+\.[0-9]+\.[0-9]+' | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | sort -V | tail -1 || true)
    [ -n "$MAKEMKV_VERSION" ] || die "MakeMKV's download page $MAKEMKV_DOWNLOAD_BASE/ names no version (name one: --with-makemkv 1.17.8)"
  fi
  if [ "$(cat "$ROOT$MAKEMKV_STAMP" 2>/dev/null || true)" = "$MAKEMKV_VERSION" ]; then
    echo "  MakeMKV $MAKEMKV_VERSION is installed"
  else
    missing=()
    for p in "${MAKEMKV_BUILD_DEPS[@]}"; do installed "$p" || missing+=("$p"); done
    if [ "${#missing[@]}" -gt 0 ]; then
      apt_install "${missing[@]}"
      did "installed Debian packages to build MakeMKV: ${missing[*]}"
    fi
    oss=$(makemkv_download "makemkv-oss-$MAKEMKV_VERSION")
    bin=$(makemkv_download "makemkv-bin-$MAKEMKV_VERSION")
    (cd "$oss" && ./configure --disable-gui && "$MAKE" && "$MAKE" install DESTDIR="$ROOT") || die "building makemkv-oss-$MAKEMKV_VERSION failed (see above)"
    did "built and installed makemkv-oss-$MAKEMKV_VERSION (MakeMKV's open libraries)"
    if [ "$ACCEPT_MAKEMKV_EULA" != 1 ]; then
      echo "install.sh: stopped before makemkv-bin-$MAKEMKV_VERSION (makemkvcon): it is under MakeMKV's own licence," >&2
      echo "  which you must accept first. Read it in src/eula_en_linux.txt of $MAKEMKV_DOWNLOAD_BASE/makemkv-bin-$MAKEMKV_VERSION.tar.gz," >&2
      echo "  then run the installer again with the same options plus --accept-makemkv-eula." >&2
      exit 1
    fi
    mkdir -p "$bin/tmp"
    echo accepted >"$bin/tmp/eula_accepted" # --accept-makemkv-eula: the question its Makefile would ask
    (cd "$bin" && "$MAKE" && "$MAKE" install DESTDIR="$ROOT") || die "building makemkv-bin-$MAKEMKV_VERSION failed (see above)"
    mkdir -p "$(dirname "$ROOT$MAKEMKV_STAMP")"
    echo "$MAKEMKV_VERSION" >"$ROOT$MAKEMKV_STAMP"
    did "installed MakeMKV $MAKEMKV_VERSION (makemkvcon; licence accepted with --accept-makemkv-eula): the agent rips with it from its next start"
  fi
fi

# --- 2. Node.js 20.19 or newer ---------------------------------------------------------------------
version_ok() { # v20.19.2 or 20.19.2+dfsg-1 or 1:20.19.2~dfsg: at least 20.19
  local v=${1#v}
  v=${v#*:}
  [[ "$v" =~ ^([0-9]+)\.([0-9]+) ]] || return 1
  local major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
  [ "$major" -gt 20 ] || { [ "$major" -eq 20 ] && [ "$minor" -ge 19 ]; }
}
node_ok() { # executable -> prints its version when it is usable
  local v
  v=$("$1" -v 2>/dev/null) || return 1
  version_ok "$v" || return 1
  echo "${v#v}"
}
usable_node() { # the system's node, when new enough and visible to the service
  local bin
  bin=$(command -v "$NODE" 2>/dev/null) || return 1
  case "$bin" in
    /home/* | /root/*)
      note "ignoring $bin: the units run with ProtectHome=yes and cannot see it" >&2
      return 1
      ;;
  esac
  node_ok "$bin" >/dev/null || return 1
  echo "$bin"
}
apt_candidate() { { "$APT_CACHE" policy "$1" 2>/dev/null || true; } | sed -n 's/^ *Candidate: *//p' | head -1; }

install_node_tarball() {
  local arch url name sums
  if [ -n "${NODE_DIST_URL:-}" ]; then
    url=$NODE_DIST_URL
  else
    case "$(uname -m)" in
      x86_64) arch=x64 ;;
      aarch64) arch=arm64 ;;
      *) die "Debian has no Node.js 20.19+ here and nodejs.org has no build for $(uname -m): install Node.js 20.19 or newer, then run this again" ;;
    esac
    url=https://nodejs.org/dist/v$NODE_VERSION/node-v$NODE_VERSION-linux-$arch.tar.gz
  fi
  name=${url##*/}
  need_curl Node.js
  "$CURL" -fsSL -o "$work/$name" "$url" || die "could not download $url"
  "$CURL" -fsSL -o "$work/SHASUMS256.txt" "${url%/*}/SHASUMS256.txt" || die "could not download ${url%/*}/SHASUMS256.txt"
  sums=$(awk -v n="$name" '$2 == n { print $1 }' "$work/SHASUMS256.txt")
  [ -n "$sums" ] || die "${url%/*}/SHASUMS256.txt does not list $name"
  [ "$(sha256sum "$work/$name" | cut -d' ' -f1)" = "$sums" ] || die "checksum mismatch for $name: not installed"
  rm -rf "$ROOT$APP/node.new"
  mkdir -p "$ROOT$APP/node.new"
  tar -xzf "$work/$name" -C "$ROOT$APP/node.new" --strip-components=1 --no-same-owner
  node_ok "$ROOT$APP/node.new/bin/node" >/dev/null || die "the Node.js from $url does not run here"
  rm -rf "$ROOT$APP/node"
  mv "$ROOT$APP/node.new" "$ROOT$APP/node"
  did "installed Node.js $(node_ok "$ROOT$APP/node/bin/node") from $url (checksum checked) into $APP/node"
}

mkdir -p "$ROOT$APP"
if NODE_BIN=$(usable_node); then
  : # the system's
elif [ -d "$ROOT$APP/node" ] && node_ok "$ROOT$APP/node/bin/node" >/dev/null; then
  NODE_BIN=$APP/node/bin/node # installed by an earlier run
else
  if [ "$apt_updated" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive "$APT_GET" update -qq
    apt_updated=1
  fi
  candidate=$(apt_candidate nodejs)
  if version_ok "$candidate"; then
    apt_install nodejs
    did "installed Debian package nodejs $candidate (the system's Node.js was missing or older than 20.19)"
    NODE_BIN=$(usable_node) || die "the nodejs package was installed, but $NODE is still missing or older than 20.19"
  else
    echo "  Node.js is missing or older than 20.19, and Debian offers nodejs ${candidate:-(none)} here: fetching the official build"
    install_node_tarball
    NODE_BIN=$APP/node/bin/node
  fi
fi
NODE_RUN=$NODE_BIN
if [ "$NODE_BIN" = "$APP/node/bin/node" ]; then
  NODE_RUN=$ROOT$NODE_BIN
  export PATH="$ROOT$APP/node/bin:$PATH" # the bundled npm runs on the bundled node
fi
if ! command -v "$NPM" >/dev/null 2>&1; then
  apt_install npm
  did "installed Debian package npm"
fi
echo "  Node.js $(node_ok "$NODE_RUN") at $NODE_BIN"

# --- 3. The service user and group -------------------------------------------------------------------
if ! "$GETENT" group ripwerk >/dev/null 2>&1; then
  "$GROUPADD" --system ripwerk
  did "created group ripwerk"
fi
if ! "$GETENT" passwd ripwerk >/dev/null 2>&1; then
  "$USERADD" --system --gid ripwerk --home-dir /var/lib/ripwerk --no-create-home --shell /usr/sbin/nologin ripwerk
  did "created system user ripwerk"
fi
# /dev/sr* and /dev/sg* are root:cdrom on Debian; a coordinator alone opens no drive.
if [ "$MODE" != coordinator ] && ! "$ID" -nG ripwerk 2>/dev/null | tr ' ' '\n' | grep -qx cdrom; then
  "$GETENT" group cdrom >/dev/null 2>&1 || die "there is no group cdrom on this host (Debian's base-passwd has it)"
  "$USERMOD" -aG cdrom ripwerk
  did "added ripwerk to the group cdrom"
fi

# --- 4. The app in /opt/ripwerk ------------------------------------------------------------------------
as_owner() { # runs a command in $SRC as the checkout's owner, so the build leaves no root-owned files there
  local owner home
  owner=$("$STAT" -c %U "$SRC")
  if [ -z "$ROOT" ] && [ "$(id -u)" -eq 0 ] && [ "$owner" != root ]; then
    home=$("$GETENT" passwd "$owner" | cut -d: -f6)
    (cd "$SRC" && "$RUNUSER" -u "$owner" -- env HOME="${home:-/tmp}" PATH="$PATH" "$@")
  else
    (cd "$SRC" && "$@")
  fi
}
stale_build() {
  if [ ! -f "$SRC/dist/coordinator/cli.js" ] || [ ! -f "$SRC/dist/ui/index.html" ]; then return 0; fi
  local d
  for d in coordinator agent shared ui scripts/build-ui.mjs package-lock.json tsconfig.json; do
    [ -e "$SRC/$d" ] || continue
    if [ -n "$(find "$SRC/$d" -type f -newer "$SRC/dist/coordinator/cli.js" -print -quit)" ]; then return 0; fi
  done
  return 1
}
if stale_build; then
  echo "  building the app in $SRC (its dist/ is missing or older than the sources)"
  if [ ! -d "$SRC/node_modules" ] || [ "$SRC/package-lock.json" -nt "$SRC/node_modules/.package-lock.json" ]; then
    as_owner "$NPM" ci --no-audit --no-fund
  fi
  as_owner "$NPM" run build
  [ -f "$SRC/dist/coordinator/cli.js" ] || die "npm run build left no dist/coordinator/cli.js in $SRC"
fi

# Copies file by file (each replaced in one rename), leaves out the compiled tests and the bench
# script, and removes what the new build no longer has.
copied=0
sync_file() { # src dest
  if ! cmp -s "$1" "$2"; then
    mkdir -p "$(dirname "$2")"
    cp "$1" "$2.ripwerk-new"
    chmod 0644 "$2.ripwerk-new"
    mv -f "$2.ripwerk-new" "$2"
    copied=$((copied + 1))
  fi
}
while IFS= read -r -d '' f; do
  sync_file "$f" "$ROOT$APP/dist/${f#"$SRC/dist/"}"
done < <(find "$SRC/dist" \( -path "$SRC/dist/test" -o -path "$SRC/dist/scripts" \) -prune -o -type f -print0)
if [ -d "$ROOT$APP/dist" ]; then
  while IFS= read -r -d '' f; do
    rel=${f#"$ROOT$APP/dist/"}
    case "$rel" in test/* | scripts/*) ;; *) [ -f "$SRC/dist/$rel" ] && continue ;; esac
    rm -f "$f"
    copied=$((copied + 1))
  done < <(find "$ROOT$APP/dist" -type f -print0)
  find "$ROOT$APP/dist" -mindepth 1 -type d -empty -delete
fi
for f in package.json package-lock.json; do sync_file "$SRC/$f" "$ROOT$APP/$f"; done
if [ "$copied" -gt 0 ]; then did "copied the app to $APP ($copied files changed)"; fi

# Production npm packages, reinstalled when the lock file or the Node.js version changes.
stamp="$(sha256sum <"$ROOT$APP/package-lock.json" | cut -d' ' -f1) node $("$NODE_RUN" -v)"
if [ "$(cat "$ROOT$APP/node_modules/.ripwerk-install" 2>/dev/null || true)" != "$stamp" ]; then
  if ! (cd "$ROOT$APP" && "$NPM" ci --omit=dev --no-audit --no-fund); then
    # better-sqlite3 is compiled when no prebuilt binary fits this platform.
    command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1 && die "npm ci in $APP failed (see above)"
    echo "  npm ci failed without a compiler: installing build-essential and python3, then trying again"
    apt_install build-essential python3
    did "installed Debian packages: build-essential python3"
    (cd "$ROOT$APP" && "$NPM" ci --omit=dev --no-audit --no-fund) || die "npm ci in $APP failed (see above)"
  fi
  mkdir -p "$ROOT$APP/node_modules"
  echo "$stamp" >"$ROOT$APP/node_modules/.ripwerk-install"
  did "installed the production npm packages in $APP"
fi

# --- 5. Configuration folder and environment file -------------------------------------------------------
owner_of() { "$STAT" -c %U:%G "$1"; }
mode_of() { stat -c %a "$1"; }
ensure_owner_mode() { # path owner mode (the path as the host sees it)
  if [ "$(owner_of "$ROOT$1")" != "$2" ]; then
    "$CHOWN" "$2" "$ROOT$1"
    did "set the owner of $1 to $2"
  fi
  if [ "$(mode_of "$ROOT$1")" != "${3#0}" ]; then
    chmod "$3" "$ROOT$1"
    did "set the mode of $1 to $3"
  fi
}
make_dir() { # path owner mode
  mkdir -p "$ROOT$1"
  "$CHOWN" "$2" "$ROOT$1"
  chmod "$3" "$ROOT$1"
  did "created $1 ($2, $3)"
}
if [ ! -d "$ROOT$ETC" ]; then make_dir "$ETC" root:ripwerk 0750; fi
ensure_owner_mode "$ETC" root:ripwerk 0750

env_tmp() { # a private temporary file beside the env file
  local t
  t=$(mktemp "$ROOT$ETC/.$ENV_NAME.XXXXXX")
  chmod 0600 "$t"
  echo "$t"
}
if [ ! -f "$ROOT$ENV_FILE" ]; then
  t=$(env_tmp)
  cat "$SRC/systemd/ripwerk.env.example" >"$t"
  mv "$t" "$ROOT$ENV_FILE"
  "$CHOWN" root:ripwerk "$ROOT$ENV_FILE"
  chmod 0640 "$ROOT$ENV_FILE"
  did "wrote $ENV_FILE from systemd/ripwerk.env.example (edit it, then: systemctl restart $UNIT)"
fi
ensure_owner_mode "$ENV_FILE" root:ripwerk 0640

# Sets KEY=value on the first KEY= line (else the first #KEY= line, else at the end) and drops any
# further KEY= lines; everything else in the file stays as it is.
set_env() { # key value shown-value
  local current t
  current=$(sed -n "s/^$1=//p" "$ROOT$ENV_FILE")
  [ "$current" = "$2" ] && return 0
  t=$(env_tmp)
  KEY=$1 VALUE=$2 awk '
    BEGIN { key = ENVIRON["KEY"]; line = key "=" ENVIRON["VALUE"] }
    { lines[NR] = $0 }
    index($0, key "=") == 1 && !set { set = NR }
    index($0, "#" key "=") == 1 && !commented { commented = NR }
    END {
      at = set ? set : commented
      for (i = 1; i <= NR; i++) {
        if (i == at) print line
        else if (index(lines[i], key "=") != 1) print lines[i]
      }
      if (!at) print line
    }' "$ROOT$ENV_FILE" >"$t"
  cat "$t" >"$ROOT$ENV_FILE" # keeps the file's owner and mode
  rm -f "$t"
  did "set $1=$3 in $ENV_FILE"
}
if [ "$MODE" = agent ]; then
  set_env MQTT_URL "$COORDINATOR_URL" "$COORDINATOR_URL"
  if [ -n "$BROKER_SECRET" ]; then set_env RIPWERK_BROKER_SECRET "$BROKER_SECRET" '(not shown)'; fi
  if [ -n "$MQTT_USER" ]; then
    set_env MQTT_USERNAME "$MQTT_USER" "$MQTT_USER"
    set_env MQTT_PASSWORD "$MQTT_PASS" '(not shown)'
  fi
  if ! grep -q '^MQTT_USERNAME=.' "$ROOT$ENV_FILE" && ! grep -q '^RIPWERK_BROKER_SECRET=.' "$ROOT$ENV_FILE"; then
    note "no MQTT_USERNAME/MQTT_PASSWORD (or legacy RIPWERK_BROKER_SECRET) in $ENV_FILE: the coordinator's broker refuses agents without them (--mqtt-username, --mqtt-password-file)"
  fi
fi

# --- 6. State, media and raw folders named in the environment file -----------------------------------------
env_value() { # key default: the last KEY= line of the env file, without quotes
  local v
  v=$(sed -n "s/^$1=//p" "$ROOT$ENV_FILE" | tail -1)
  v=${v%\"}
  v=${v#\"}
  v=${v%\'}
  v=${v#\'}
  echo "${v:-$2}"
}
DATA_DIR=$(env_value DATA_DIR /var/lib/ripwerk)
MEDIA_ROOT=$(env_value MEDIA_ROOT /app/media)
RAW_DIR=$(env_value RAW_DIR /app/temp/raw)
MAKEMKV_DATA_DIR=$(env_value MAKEMKV_DATA_DIR /var/lib/ripwerk/.MakeMKV)
for d in "$DATA_DIR" "$MEDIA_ROOT" "$RAW_DIR" "$MAKEMKV_DATA_DIR"; do
  case "$d" in /*) ;; *) die "$ENV_FILE: $d is not an absolute path (DATA_DIR, MEDIA_ROOT, RAW_DIR and MAKEMKV_DATA_DIR must be)" ;; esac
done

# The state folder is the service's own: its owner and mode are set on every run. It holds API keys,
# webhook tokens, mount credentials and disc keys, so it is 0700 (StateDirectoryMode=0700 in the
# units; the service makes everything in it 0600 at every start).
data_mode=0700
if [ ! -d "$ROOT$DATA_DIR" ]; then make_dir "$DATA_DIR" ripwerk:ripwerk "$data_mode"; fi
ensure_owner_mode "$DATA_DIR" ripwerk:ripwerk "$data_mode"
# Media and raw folders are created for the service; folders that exist already (a NAS mount, a
# library) keep their owner, with a warning when it is not ripwerk.
media_dir() { # path mode
  if [ ! -d "$ROOT$1" ]; then
    make_dir "$1" ripwerk:ripwerk "$2"
  elif [ "$(owner_of "$ROOT$1")" != ripwerk:ripwerk ]; then
    note "$1 belongs to $(owner_of "$ROOT$1"), not ripwerk: make sure the user ripwerk can write there"
  fi
}
media_dir "$MEDIA_ROOT" 0755
media_dir "$RAW_DIR" 0750

# --- 7. The unit, with the node it runs on, and the folders it may write ----------------------------------
unit_changed=0
mkdir -p "$ROOT$UNIT_DIR"
NODE_BIN=$NODE_BIN awk 'index($0, "ExecStart=/usr/bin/node ") == 1 { $0 = "ExecStart=" ENVIRON["NODE_BIN"] substr($0, 24) } { print }' \
  "$SRC/systemd/$UNIT" >"$work/$UNIT"
if ! cmp -s "$work/$UNIT" "$ROOT$UNIT_DIR/$UNIT"; then
  cp "$work/$UNIT" "$ROOT$UNIT_DIR/$UNIT.ripwerk-new"
  chmod 0644 "$ROOT$UNIT_DIR/$UNIT.ripwerk-new"
  mv -f "$ROOT$UNIT_DIR/$UNIT.ripwerk-new" "$ROOT$UNIT_DIR/$UNIT"
  unit_changed=1
  did "installed $UNIT_DIR/$UNIT"
fi

# --with-mounts: the drop-in that lets the service mount NAS shares (root, CAP_SYS_ADMIN, and no mount
# namespace of its own, so the host sees the mounts). Without the option an installed one stays.
mounts_dropin=$UNIT_DIR/$UNIT.d/mounts.conf
if [ "$WITH_MOUNTS" = 1 ] && ! cmp -s "$SRC/systemd/ripwerk-mounts.conf" "$ROOT$mounts_dropin"; then
  mkdir -p "$ROOT$UNIT_DIR/$UNIT.d"
  cp "$SRC/systemd/ripwerk-mounts.conf" "$ROOT$mounts_dropin.ripwerk-new"
  chmod 0644 "$ROOT$mounts_dropin.ripwerk-new"
  mv -f "$ROOT$mounts_dropin.ripwerk-new" "$ROOT$mounts_dropin"
  unit_changed=1
  did "installed $mounts_dropin (the service may mount NAS shares: it runs as root with CAP_SYS_ADMIN, without ProtectSystem; see docs/install.md)"
elif [ "$WITH_MOUNTS" = 0 ] && [ -f "$ROOT$mounts_dropin" ]; then
  note "$mounts_dropin (from --with-mounts) stays; remove it and run this again to take the mount right back"
fi
has_mounts=0
[ -f "$ROOT$mounts_dropin" ] && has_mounts=1

# ProtectSystem=strict: folders from the env file outside the unit's writable ones get a drop-in.
# With the mounts drop-in there is no ProtectSystem (and ReadWritePaths= would bring back the mount
# namespace that hides the service's mounts from the host), so no paths drop-in then.
extra=()
dirs=("$DATA_DIR" "$MEDIA_ROOT" "$RAW_DIR")
[ "$MODE" = coordinator ] || dirs+=("$MAKEMKV_DATA_DIR")
[ "$has_mounts" = 1 ] && dirs=()
for d in "${dirs[@]}"; do
  inside=0
  for w in "${UNIT_WRITABLE[@]}"; do case "$d/" in "$w"/*) inside=1 ;; esac; done
  [ "$inside" = 1 ] && continue
  case "$d" in
    /home/* | /root/*) note "$d is under /home or /root, which the service cannot see (ProtectHome=yes): choose another folder in $ENV_FILE" ;;
    *[[:space:]]*) note "$d holds a space: add it to ReadWritePaths= yourself (systemctl edit $UNIT)" ;;
    *) [[ " ${extra[*]} " == *" -$d "* ]] || extra+=("-$d") ;;
  esac
done
dropin=$UNIT_DIR/$UNIT.d/ripwerk-paths.conf
if [ "${#extra[@]}" -gt 0 ]; then
  {
    echo "# Written by scripts/install.sh: folders named in $ENV_FILE outside /srv/media and"
    echo "# /var/lib/ripwerk, which the service must be able to write. Re-running the installer updates it."
    echo "[Service]"
    echo "ReadWritePaths=${extra[*]}"
  } >"$work/dropin"
  if ! cmp -s "$work/dropin" "$ROOT$dropin"; then
    mkdir -p "$ROOT$UNIT_DIR/$UNIT.d"
    cp "$work/dropin" "$ROOT$dropin"
    chmod 0644 "$ROOT$dropin"
    unit_changed=1
    did "wrote $dropin (ReadWritePaths=${extra[*]})"
  fi
elif [ -f "$ROOT$dropin" ]; then
  rm -f "$ROOT$dropin"
  rmdir "$ROOT$UNIT_DIR/$UNIT.d" 2>/dev/null || true
  unit_changed=1
  if [ "$has_mounts" = 1 ]; then
    did "removed $dropin (with the mounts drop-in the service has no ProtectSystem: it writes wherever its user may)"
  else
    did "removed $dropin (every folder is inside /srv/media or /var/lib/ripwerk again)"
  fi
fi

for other in ripwerk.service ripwerk-coordinator.service ripwerk-agent.service; do
  if [ "$other" != "$UNIT" ] && [ -e "$ROOT$UNIT_DIR/multi-user.target.wants/$other" ]; then
    note "$other is enabled too; if this host should run only $UNIT: systemctl disable --now $other"
  fi
done

# --- 8. Enable, start, restart after a change ----------------------------------------------------------------
booted=0
[ -d "$ROOT/run/systemd/system" ] && booted=1 # sd_booted(3)
pending=$changes
if [ "$booted" = 1 ] && [ "$unit_changed" = 1 ]; then "$SYSTEMCTL" daemon-reload; fi
if ! "$SYSTEMCTL" is-enabled --quiet "$UNIT" 2>/dev/null; then
  if [ "$booted" = 1 ]; then
    "$SYSTEMCTL" enable --now "$UNIT"
    did "enabled and started $UNIT"
  else
    "$SYSTEMCTL" enable "$UNIT"
    did "enabled $UNIT (systemd is not running here: it starts at the next boot)"
  fi
elif [ "$booted" = 1 ]; then
  if ! "$SYSTEMCTL" is-active --quiet "$UNIT"; then
    "$SYSTEMCTL" start "$UNIT"
    did "started $UNIT"
  elif [ "$pending" -gt 0 ]; then
    "$SYSTEMCTL" restart "$UNIT"
    did "restarted $UNIT to load the changes"
  fi
fi

state=running
[ "$booted" = 1 ] || state=enabled
if [ "$changes" -eq 0 ]; then
  echo "Nothing changed: Ripwerk ($MODE) is installed and $UNIT is $state."
else
  echo "Done ($changes changes). Settings: $ENV_FILE. Logs: journalctl -u $UNIT -f"
  if [ "$MODE" != agent ]; then
    echo "Web UI: http://$(hostname):8080/ (or behind the reverse proxy of deploy/nginx-ripwerk.conf)."
    echo "Agents on other hosts need their own MQTT credentials (the password is shown once):"
    echo "  curl -X POST http://$(hostname):8080/api/workers/<name>/credentials"
    echo "(older agents use the broker secret the coordinator writes at its first start: sudo cat $DATA_DIR/broker-secret)"
  fi
fi
