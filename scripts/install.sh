#!/usr/bin/env bash
# Installs Ripwerk on a Debian host from this checkout: the Debian tools, Node.js 20 (when the
# system's is missing or older than 20.19), the service user, the app in /opt/ripwerk, the state
# and media folders, the environment file in /etc/ripwerk and the systemd unit, which it enables
# and starts. Running it again changes only what differs and says so.
#
#   sudo bash scripts/install.sh                      all-in-one (coordinator + local agent)
#   sudo bash scripts/install.sh --coordinator        coordinator only
#   sudo bash scripts/install.sh --agent --coordinator-url mqtt://server:1883 [--broker-secret S]
#
# For tests and packaging every path is below RIPWERK_ROOT (default /), and the system commands can
# be replaced through APT_GET, DPKG_QUERY, SYSTEMCTL, GETENT, GROUPADD, USERADD, USERMOD, ID, CHOWN,
# NPM, NODE and CURL.
set -euo pipefail

usage() {
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
}

MODE=all
COORDINATOR_URL=''
BROKER_SECRET=''
while [ $# -gt 0 ]; do
  case "$1" in
    --agent) MODE=agent ;;
    --coordinator) MODE=coordinator ;;
    --coordinator-url) COORDINATOR_URL=${2:-}; shift ;;
    --coordinator-url=*) COORDINATOR_URL=${1#*=} ;;
    --broker-secret) BROKER_SECRET=${2:-}; shift ;;
    --broker-secret=*) BROKER_SECRET=${1#*=} ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$MODE" = agent ] && [ -z "$COORDINATOR_URL" ]; then
  echo "install.sh: --agent needs --coordinator-url mqtt://<coordinator host>:1883 (the coordinator's broker)" >&2
  exit 2
fi
if [ -n "$COORDINATOR_URL" ] && ! [[ "$COORDINATOR_URL" =~ ^mqtts?://[^/[:space:]]+$ ]]; then
  echo "install.sh: --coordinator-url must look like mqtt://host:1883, got \"$COORDINATOR_URL\"" >&2
  exit 2
fi

ROOT=${RIPWERK_ROOT:-/}
ROOT=${ROOT%/}
SRC=$(cd "$(dirname "$0")/.." && pwd)
APT_GET=${APT_GET:-apt-get}
DPKG_QUERY=${DPKG_QUERY:-dpkg-query}
SYSTEMCTL=${SYSTEMCTL:-systemctl}
GETENT=${GETENT:-getent}
GROUPADD=${GROUPADD:-groupadd}
USERADD=${USERADD:-useradd}
USERMOD=${USERMOD:-usermod}
ID=${ID:-id}
CHOWN=${CHOWN:-chown}
NPM=${NPM:-npm}
NODE=${NODE:-node}
CURL=${CURL:-curl}
NODE_VERSION=${NODE_VERSION:-20.19.5}

case "$MODE" in
  all) UNIT=ripwerk.service; ENV_NAME=ripwerk.env ;;
  coordinator) UNIT=ripwerk-coordinator.service; ENV_NAME=coordinator.env ;;
  agent) UNIT=ripwerk-agent.service; ENV_NAME=agent.env ;;
esac
APP=/opt/ripwerk
STATE=/var/lib/ripwerk
ETC=/etc/ripwerk
ENV_FILE=$ETC/$ENV_NAME

changes=0
did() {
  echo "  $*"
  changes=$((changes + 1))
}

echo "Installing Ripwerk ($MODE) into ${ROOT:-/}"

# 1. Debian packages: the tools the agent drives (a coordinator alone needs none of them).
packages=()
if [ "$MODE" != coordinator ]; then
  packages=(handbrake-cli ffmpeg lsdvd dvdbackup abcde cdparanoia flac eject setcd python3 ca-certificates)
fi
missing=()
for p in "${packages[@]}"; do
  "$DPKG_QUERY" -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive "$APT_GET" update -qq
  DEBIAN_FRONTEND=noninteractive "$APT_GET" install -y -qq --no-install-recommends "${missing[@]}"
  did "installed Debian packages: ${missing[*]}"
fi

# 2. Node.js 20.19 or newer: the system's, else the official build in /opt/ripwerk/node.
node_ok() {
  local v
  v=$("$1" -v 2>/dev/null) || return 1
  v=${v#v}
  local major=${v%%.*} rest=${v#*.}
  local minor=${rest%%.*}
  [ "$major" -gt 20 ] || { [ "$major" -eq 20 ] && [ "$minor" -ge 19 ]; }
}
if node_ok "$NODE"; then
  NODE_BIN=$(command -v "$NODE")
else
  NODE_BIN=$APP/node/bin/node
  if ! node_ok "$ROOT$NODE_BIN"; then
    case "$(uname -m)" in
      x86_64) arch=x64 ;;
      aarch64) arch=arm64 ;;
      *) echo "install.sh: no Node.js build for $(uname -m); install Node.js 20.19+ first" >&2; exit 1 ;;
    esac
    url=${NODE_DIST_URL:-https://nodejs.org/dist/v$NODE_VERSION/node-v$NODE_VERSION-linux-$arch.tar.gz}
    mkdir -p "$ROOT$APP/node"
    "$CURL" -fsSL "$url" | tar -xz -C "$ROOT$APP/node" --strip-components=1
    did "installed Node.js from $url into $APP/node (the system's is missing or older than 20.19)"
  fi
fi

# 3. The service user, in the cdrom group for the optical drives.
if ! "$GETENT" group ripwerk >/dev/null 2>&1; then
  "$GROUPADD" --system ripwerk
  did "created group ripwerk"
fi
if ! "$GETENT" passwd ripwerk >/dev/null 2>&1; then
  "$USERADD" --system --gid ripwerk --home-dir "$STATE" --no-create-home --shell /usr/sbin/nologin ripwerk
  did "created user ripwerk"
fi
if [ "$MODE" != coordinator ] && ! "$ID" -nG ripwerk 2>/dev/null | tr ' ' '\n' | grep -qx cdrom; then
  "$USERMOD" -aG cdrom ripwerk
  did "added ripwerk to the cdrom group"
fi

# 4. The app: the built dist/ and the package files, production node_modules next to them.
if [ ! -f "$SRC/dist/coordinator/cli.js" ] || [ ! -f "$SRC/dist/ui/index.html" ]; then
  (cd "$SRC" && "$NPM" ci --no-audit --no-fund && "$NPM" run build)
fi
mkdir -p "$ROOT$APP"
for item in dist package.json package-lock.json; do
  if ! diff -rq "$SRC/$item" "$ROOT$APP/$item" >/dev/null 2>&1; then
    rm -rf "${ROOT:?}$APP/$item"
    cp -a "$SRC/$item" "$ROOT$APP/$item"
    did "copied $item to $APP"
  fi
done
if [ ! -d "$ROOT$APP/node_modules" ] || [ "$ROOT$APP/package-lock.json" -nt "$ROOT$APP/node_modules" ]; then
  (cd "$ROOT$APP" && "$NPM" ci --omit=dev --no-audit --no-fund)
  touch "$ROOT$APP/node_modules"
  did "installed the npm packages in $APP"
fi

# 5. Folders with their owners.
ensure_dir() { # path mode owner
  if [ ! -d "$ROOT$1" ]; then
    mkdir -p "$ROOT$1"
    did "created $1"
  fi
  chmod "$2" "$ROOT$1"
  "$CHOWN" "$3" "$ROOT$1"
}
ensure_dir "$STATE" 0750 ripwerk:ripwerk
ensure_dir "$ETC" 0750 root:ripwerk

# 6. The environment file: written once from systemd/ripwerk.env.example; a user's edits stay.
#    An agent gets the coordinator's broker (and secret) set on every run.
if [ ! -f "$ROOT$ENV_FILE" ]; then
  cp "$SRC/systemd/ripwerk.env.example" "$ROOT$ENV_FILE"
  did "wrote $ENV_FILE (edit it, then: systemctl restart $UNIT)"
fi
set_env() { # key value
  local line="$1=$2"
  if ! grep -qxF "$line" "$ROOT$ENV_FILE"; then
    grep -v -e "^$1=" -e "^#$1=" "$ROOT$ENV_FILE" >"$ROOT$ENV_FILE.new" || true
    echo "$line" >>"$ROOT$ENV_FILE.new"
    mv "$ROOT$ENV_FILE.new" "$ROOT$ENV_FILE"
    did "set $1 in $ENV_FILE"
  fi
}
if [ "$MODE" = agent ]; then
  set_env MQTT_URL "$COORDINATOR_URL"
  [ -n "$BROKER_SECRET" ] && set_env RIPWERK_BROKER_SECRET "$BROKER_SECRET"
fi
chmod 0640 "$ROOT$ENV_FILE"
"$CHOWN" root:ripwerk "$ROOT$ENV_FILE"
media=$(sed -n 's/^MEDIA_ROOT=//p' "$ROOT$ENV_FILE" | tail -1)
raw=$(sed -n 's/^RAW_DIR=//p' "$ROOT$ENV_FILE" | tail -1)
for d in ${media:+"$media"} ${raw:+"$raw"}; do ensure_dir "$d" 0775 ripwerk:ripwerk; done

# 7. The unit, with the node it runs on.
unit_changed=0
mkdir -p "$ROOT/etc/systemd/system"
sed "s#^ExecStart=/usr/bin/node #ExecStart=$NODE_BIN #" "$SRC/systemd/$UNIT" >"$ROOT/etc/systemd/system/$UNIT.new"
if cmp -s "$ROOT/etc/systemd/system/$UNIT.new" "$ROOT/etc/systemd/system/$UNIT"; then
  rm "$ROOT/etc/systemd/system/$UNIT.new"
else
  mv "$ROOT/etc/systemd/system/$UNIT.new" "$ROOT/etc/systemd/system/$UNIT"
  unit_changed=1
  did "installed /etc/systemd/system/$UNIT"
fi

# 8. Enable and (re)start it.
if [ "$unit_changed" = 1 ]; then "$SYSTEMCTL" daemon-reload; fi
if [ "$changes" -gt 0 ] || ! "$SYSTEMCTL" is-active --quiet "$UNIT"; then
  "$SYSTEMCTL" enable --now "$UNIT"
  [ "$changes" -gt 0 ] && "$SYSTEMCTL" restart "$UNIT"
  did "enabled and started $UNIT"
fi

if [ "$changes" -eq 0 ]; then
  echo "Nothing changed: Ripwerk ($MODE) is installed and $UNIT is running."
else
  echo "Done ($changes changes). Logs: journalctl -u $UNIT -f"
  [ "$MODE" = agent ] || echo "Web UI: http://$(hostname):8080/ (or through the reverse proxy in deploy/nginx-ripwerk.conf)"
fi
