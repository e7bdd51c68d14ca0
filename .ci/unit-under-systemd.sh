#!/usr/bin/env bash
# Runs the .deb's service under a real systemd (CONTRACT §17), where CI has none running:
# systemd is started as PID 1 of new PID and mount namespaces, with a /run of its own
# and a default target that starts nothing, and the package's life is played through it
# with its sandbox on (DynamicUser, ProtectSystem, the system call filter, …): install,
# enable --now, keys and an admin token made by systemd-run as the guides make them, a
# lookup, the admin API, reload (SIGHUP), a restart after kill -9, an upgrade that
# restarts it, remove (stops it, keeps the state) and purge (deletes the state).
#
# The namespaces share the machine's files, so what boot-time units would do to them is
# kept out: the units that empty /tmp, set sysctls, the clock or the random seed, load
# modules or run udev are masked in the private /run, the journal is kept in memory,
# /tmp and /var/tmp are private, /etc/machine-id is a private copy, and the image's policy-rc.d (which forbids starting services in containers) is hidden
# in the namespace only. Skipped, saying why, where namespaces cannot be made or the
# package for this architecture is not built.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$(dpkg --print-architecture)
version=$(node -p 'require("./package.json").version')
deb="$PWD/dist/iplookup_${version}_$arch.deb"
skip() { echo "skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root"
[ -x /lib/systemd/systemd ] || skip "no systemd installed"
[ -f "$deb" ] || skip "$deb is not built (bun run release)"
command -v unshare >/dev/null && command -v nsenter >/dev/null || skip "no unshare or nsenter"
unshare --pid --fork --mount true 2>/dev/null || skip "namespaces cannot be made here"
if [ -d /run/systemd/system ]; then skip "systemd runs this machine: try the unit with systemctl itself"; fi
if dpkg -s iplookup >/dev/null 2>&1; then skip "iplookup is installed already"; fi

work=$(mktemp -d /var/tmp/iplookup-unit.XXXXXX)
init=
cleanup() {
  if [ -n "$init" ]; then kill -9 "$init" 2>/dev/null || true; fi
  if dpkg -s iplookup >/dev/null 2>&1; then dpkg --purge iplookup >/dev/null 2>&1 || true; fi
  rm -rf "$work" /etc/iplookup
  rmdir /var/lib/private 2>/dev/null || true
}
trap cleanup EXIT

cat > "$work/boot.sh" <<'BOOT'
#!/bin/bash
set -e
mount --make-rprivate /
mount -t proc proc /proc
mount -t tmpfs tmpfs /run
mkdir -p /run/lock /run/systemd/system
printf '[Unit]\nDescription=nothing but the units asked for\n' > /run/systemd/system/minimal.target
for unit in systemd-tmpfiles-setup.service systemd-tmpfiles-setup-dev.service systemd-tmpfiles-clean.timer \
  systemd-sysctl.service systemd-modules-load.service systemd-udevd.service systemd-udev-trigger.service \
  systemd-random-seed.service systemd-timesyncd.service systemd-remount-fs.service systemd-update-utmp.service \
  systemd-machine-id-commit.service systemd-journal-flush.service; do
  ln -s /dev/null "/run/systemd/system/$unit"
done
mkdir -p /run/systemd/journald.conf.d
printf '[Journal]\nStorage=volatile\n' > /run/systemd/journald.conf.d/volatile.conf
cp /etc/machine-id "$WORK/machine-id" 2>/dev/null || : > "$WORK/machine-id"
mount --bind "$WORK/machine-id" /etc/machine-id
printf '#!/bin/sh\nexit 0\n' > "$WORK/policy-rc.d"
chmod +x "$WORK/policy-rc.d"
if [ -e /usr/sbin/policy-rc.d ]; then mount --bind "$WORK/policy-rc.d" /usr/sbin/policy-rc.d; fi
# The service's private /tmp and /var/tmp are made in these.
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /var/tmp
export container=iplookup-ci
exec /lib/systemd/systemd --system --unit=minimal.target
BOOT
chmod +x "$work/boot.sh"
WORK=$work unshare --pid --fork --mount "$work/boot.sh" > "$work/systemd.log" 2>&1 &
unshare_pid=$!
for _ in $(seq 1 100); do
  init=$(pgrep -P "$unshare_pid" -x systemd || true)
  [ -n "$init" ] && break
  sleep 0.1
done
[ -n "$init" ] || { cat "$work/systemd.log"; echo "systemd did not start"; exit 1; }
# Inside the namespaces, where systemctl, systemd-run and dpkg's scripts see that systemd.
inside() { timeout 120 nsenter -t "$init" -m -p "$@" < /dev/null; }
for _ in $(seq 1 100); do
  state=$(inside systemctl is-system-running 2>/dev/null || true)
  case "$state" in running | degraded) break ;; esac
  sleep 0.2
done
version_line=$(inside systemctl --version)
echo "${version_line%%$'\n'*}: $state"
inside systemctl start dbus.socket
as_service() { inside systemd-run --quiet --pipe --wait -p DynamicUser=yes -p User=iplookup -p StateDirectory=iplookup "$@"; }
fail() { echo "FAILED: $*"; inside systemctl status iplookup --no-pager || true; inside journalctl -u iplookup --no-pager -n 30 || true; exit 1; }
serving() {
  for _ in $(seq 1 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' localhost:8080/healthz)" = 200 ] && return 0
    sleep 0.1
  done
  return 1
}
main_pid() { inside systemctl show -p MainPID --value iplookup; }

echo "--- install, enable --now"
inside dpkg -i "$deb" > /dev/null
inside systemctl enable --now iplookup
serving || fail "not serving after enable --now"
inside systemctl is-active iplookup
echo "--- a key and an admin token made as the service's user; a lookup; the admin API"
key=$(as_service iplookup keys create --name ci --json --state /var/lib/iplookup/state.db | jq -r .key)
token=$(as_service iplookup admin create --name ci --json --state /var/lib/iplookup/state.db | jq -r .token)
answer=$(curl -s -H "authorization: Bearer $key" -H 'content-type: application/json' -d '{"ip":"8.8.8.8"}' localhost:8080/v1/lookup)
[ "$(echo "$answer" | jq -r .asn)" = 15169 ] || fail "lookup answered: $answer"
[ "$(curl -s -H "authorization: Bearer $token" localhost:8081/admin/v1/keys | jq -r '.keys[0].name')" = ci ] || fail "the admin API did not list the key"
echo "lookup and admin API answered"
echo "--- reload"
inside systemctl reload iplookup
logged() { local journal; journal=$(inside journalctl -u iplookup --no-pager -o cat); [[ $journal == *"$1"* ]]; }
for _ in $(seq 1 50); do logged '"msg":"data reloaded"' && break; sleep 0.2; done
logged '"msg":"data reloaded"' || fail "no data reloaded line after reload"
echo "reloaded"
echo "--- kill -9: restarted"
before=$(main_pid)
inside kill -9 "$before"
for _ in $(seq 1 100); do [ "$(main_pid)" != 0 ] && [ "$(main_pid)" != "$before" ] && break; sleep 0.1; done
serving || fail "not serving after kill -9"
status=$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $key" -H 'content-type: application/json' -d '{"ip":"1.1.1.1"}' localhost:8080/v1/lookup)
[ "$status" = 200 ] || fail "the key was answered $status after the restart"
echo "restarted $(inside systemctl show -p NRestarts --value iplookup) time(s); the key still works"
echo "--- upgrade: restarted"
before=$(main_pid)
inside dpkg -i "$deb" > /dev/null
serving || fail "not serving after the upgrade"
[ "$(main_pid)" != "$before" ] || fail "the upgrade did not restart the service"
echo "restarted by the upgrade"
echo "--- systemd-analyze security"
inside systemd-analyze security iplookup --no-pager | tail -1
echo "--- remove: stopped, state kept"
inside dpkg -r iplookup > /dev/null
[ "$(inside systemctl is-active iplookup || true)" = inactive ] || fail "still running after remove"
inside test -f /var/lib/private/iplookup/state.db || fail "the state was not kept on remove"
echo "stopped; state kept"
echo "--- purge: state deleted"
inside dpkg --purge iplookup > /dev/null
inside test ! -e /var/lib/private/iplookup || fail "the state is still there after purge"
echo "state deleted"
