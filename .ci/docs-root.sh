#!/usr/bin/env bash
# Runs the guides' ```sh root blocks (docs/README.md: the convention) as root, in dist/
# after `bun run release`: installing the .deb and the tarball, enabling the service,
# keys for it, a backup. Then checks the installed unit with `systemd-analyze verify`,
# and removes what the guides installed.
#
# Where systemd is not running (a CI container), the blocks run under a systemd started
# in namespaces of their own (.ci/systemd-namespace.sh), so `systemctl`, `systemd-run`
# and `journalctl` are systemd's own and the service runs in its sandbox. Where those
# namespaces cannot be made either, `systemctl` and `systemd-run` are shell functions
# that run what the unit would, without its sandbox: ExecStartPre, then ExecStart in the
# background with the unit's EnvironmentFile, its log in /var/log/iplookup-guides.log;
# `systemd-run … COMMAND` runs COMMAND. Each says so.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/systemd-namespace.sh
script=$(mktemp)
prelude=$(mktemp)
namespace_work=$(mktemp -d /var/tmp/iplookup-guides.XXXXXX)
# What the guides installed is removed at the end; after a failure too, so that the checks
# after this one find the machine as it was.
remove_installed() {
  systemctl stop iplookup 2>/dev/null || true
  DEBIAN_FRONTEND=noninteractive apt-get purge -y iplookup
  rm -rf /etc/iplookup /usr/local/bin/iplookup /opt/iplookup /var/lib/iplookup /var/backups/iplookup /var/log/iplookup-guides.log*
  rmdir /var/lib/private 2>/dev/null || true
}
finish() {
  local status=$?
  systemd_namespace_stop
  if [ "$status" != 0 ]; then remove_installed > /dev/null 2>&1 || true; fi
  rm -rf "$script" "$prelude" "$namespace_work"
}
trap finish EXIT
bun test/docs/root-script.ts > "$script"

cat > "$prelude" <<'PRELUDE'
if [ ! -d /run/systemd/system ]; then
  echo "systemd is not running here: systemctl and systemd-run run the unit's commands directly, unsandboxed" >&2
  __unit=/lib/systemd/system/iplookup.service
  __pid=/run/iplookup-guides.pid
  __log=/var/log/iplookup-guides.log
  __directive() { sed -n "s/^$1=//p" "$__unit"; }
  __running() { [ -f "$__pid" ] && kill -0 "$(cat "$__pid")" 2>/dev/null; }
  __service_start() {
    mkdir -p /var/lib/iplookup
    ( set -a; [ -f /etc/iplookup/iplookup.env ] && . /etc/iplookup/iplookup.env; set +a
      $(__directive ExecStartPre) >> "$__log" 2>&1 || { echo "ExecStartPre failed: see $__log" >&2; exit 1; }
      : > "$__log.serve"
      setsid $(__directive ExecStart) >> "$__log.serve" 2>&1 < /dev/null & echo $! > "$__pid" ) || return 1
    for _ in $(seq 1 120); do grep -q '"iplookup serving"' "$__log.serve" && { cat "$__log.serve" >> "$__log"; return 0; }; __running || break; sleep 0.5; done
    cat "$__log.serve" >&2; return 1
  }
  __service_stop() { if __running; then kill -TERM "$(cat "$__pid")"; while __running; do sleep 0.1; done; fi; rm -f "$__pid"; }
  systemctl() {
    local args=" $* "
    args=${args// --no-pager / }
    case "$args" in
      *" daemon-reload "*) return 0 ;;
      " enable --now iplookup "|" start iplookup "|" restart iplookup ") __service_stop; __service_start ;;
      " stop iplookup "|" disable --now iplookup ") __service_stop ;;
      " reload iplookup ") kill -HUP "$(cat "$__pid")" ;;
      " status iplookup ") if __running; then echo "iplookup: running (pid $(cat "$__pid"), started without systemd by .ci/docs-root.sh)"; else echo "iplookup: not running"; return 3; fi ;;
      *) echo "systemctl$args: not emulated without systemd" >&2; return 1 ;;
    esac
  }
  systemd-run() {
    while [ $# -gt 0 ]; do
      case "$1" in
        -p|--property|--uid|--gid|--unit) shift 2 ;;
        -*) shift ;;
        *) break ;;
      esac
    done
    echo "(without systemd: $*)" >&2
    "$@"
  }
  journalctl() { cat "$__log"; }
fi
PRELUDE

cd dist
# The blocks as one text: a /tmp of the namespaces' own would not hold these files.
guides="$(cat "$prelude")
$(cat "$script")"
if [ ! -d /run/systemd/system ] && systemd_namespace_start "$namespace_work"; then
  INSIDE_TIMEOUT=900 inside bash -c "cd '$PWD'
$guides"
  # Ends the service the guides started, with every process in the namespaces.
  systemd_namespace_stop
else
  bash -c "$guides
if declare -F __service_stop >/dev/null; then __service_stop; fi"
fi

echo "--- systemd-analyze verify, on the installed unit"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify --man=no /lib/systemd/system/iplookup.service
  echo "clean"
fi
remove_installed
