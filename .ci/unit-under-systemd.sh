#!/usr/bin/env bash
# Runs the .deb's service under a real systemd (CONTRACT §17), where CI has none running:
# systemd in namespaces of its own (.ci/systemd-namespace.sh), and the package's life
# played through it with the unit's sandbox on (DynamicUser, ProtectSystem, the system
# call filter, …): install, a start that fails while the port is taken, enable --now
# (the port answers when it returns: Type=notify), a key and an admin token made by
# systemd-run as the guides make them, a lookup, the admin API, reload (SIGHUP), a
# restart after kill -9, a port below 1024 (refused by the unit alone, served with the
# drop-in docs/install.md shows), an upgrade that restarts it, remove (stops it, keeps the
# state and the environment file) and purge (deletes both, and the link that enable
# made). Skipped, saying why, where the namespaces cannot be made or the package for
# this architecture is not built.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=$(dpkg --print-architecture)
version=$(node -p 'require("./package.json").version')
deb="$PWD/dist/iplookup_${version}_$arch.deb"
source .ci/systemd-namespace.sh
skip() { echo "skipped: $*"; exit 0; }
[ -f "$deb" ] || skip "$deb is not built (bun run release)"
if [ -d /run/systemd/system ]; then skip "systemd runs this machine: try the unit with systemctl itself"; fi
if dpkg -s iplookup >/dev/null 2>&1; then skip "iplookup is installed already"; fi

work=$(mktemp -d /var/tmp/iplookup-unit.XXXXXX)
holder=
cleanup() {
  if [ -n "$holder" ]; then kill "$holder" 2>/dev/null || true; fi
  systemd_namespace_stop
  if dpkg -s iplookup >/dev/null 2>&1; then dpkg --purge iplookup >/dev/null 2>&1 || true; fi
  rm -rf "$work" /etc/iplookup /etc/systemd/system/iplookup.service.d
  rmdir /var/lib/private 2>/dev/null || true
}
trap cleanup EXIT

systemd_namespace_start "$work" || skip "see above"
as_service() { inside systemd-run --quiet --pipe --wait -p DynamicUser=yes -p User=iplookup -p StateDirectory=iplookup "$@"; }
fail() { echo "FAILED: $*"; inside systemctl status iplookup --no-pager || true; inside journalctl -u iplookup --no-pager -n 30 || true; exit 1; }
answers() { [ "$(curl -s -o /dev/null -w '%{http_code}' localhost:8080/healthz)" = 200 ]; }
# Within ten seconds (a restart systemd makes by itself).
serving() {
  for _ in $(seq 1 100); do answers && return 0; sleep 0.1; done
  return 1
}
main_pid() { inside systemctl show -p MainPID --value iplookup; }
port_taken() { local sockets; sockets=$(ss -ltn); [[ $sockets == *":8080 "* ]]; }
logged() { local journal; journal=$(inside journalctl -u iplookup --no-pager -o cat); [[ $journal == *"$1"* ]]; }

echo "--- install; a start while the port is taken fails"
inside dpkg -i "$deb" > /dev/null
bun -e 'Bun.listen({ hostname: "::", port: 8080, socket: { data() {} } }); await Bun.sleep(60_000)' &
holder=$!
for _ in $(seq 1 100); do port_taken && break; sleep 0.1; done
if inside systemctl start iplookup 2> /dev/null; then fail "systemctl start succeeded while the port was taken"; fi
inside systemctl stop iplookup
kill "$holder"
wait "$holder" 2> /dev/null || true
holder=
echo "failed, as it should"
echo "--- enable --now, with an environment file as install.md makes it"
inside install -m 0600 /dev/null /etc/iplookup/iplookup.env
inside sh -c 'echo IPLOOKUP_LOG_LEVEL=info >> /etc/iplookup/iplookup.env'
inside systemctl enable --now iplookup
# Type=notify: systemctl returns once serve has said it answers.
answers || fail "not answering when systemctl enable --now returned"
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
echo "--- a port below 1024: refused without the drop-in install.md shows, served with it"
low=80
dropin=/etc/systemd/system/iplookup.service.d/low-port.conf
[ -z "$(ss -Htln "sport = :$low")" ] || fail "port $low is taken on this machine: pick another low port here"
inside sh -c "echo IPLOOKUP_PORT=$low >> /etc/iplookup/iplookup.env"
unprivileged=$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)
if [ "$unprivileged" -le "$low" ]; then
  echo "this machine lets any user bind ports from $unprivileged (net.ipv4.ip_unprivileged_port_start): no refusal to see"
elif inside systemctl restart iplookup 2> /dev/null; then
  fail "the unit served port $low without the drop-in"
else
  for _ in $(seq 1 50); do logged ":$low: permission denied" && break; sleep 0.2; done
  logged ":$low: permission denied" || fail "the failed start on port $low did not say permission denied"
  echo "refused, as it should be"
fi
mkdir -p "$(dirname "$dropin")"
bun test/docs/unit-examples.ts docs/install.md CAP_NET_BIND_SERVICE > "$dropin"
inside systemctl daemon-reload
inside systemctl restart iplookup || fail "the unit with install.md's drop-in did not start on port $low"
[ "$(curl -s -o /dev/null -w '%{http_code}' "localhost:$low/healthz")" = 200 ] || fail "not answering on port $low with the drop-in"
echo "served on port $low with the drop-in:"
sed 's/^/  /' "$dropin"
rm -rf "$(dirname "$dropin")"
inside sed -i "/^IPLOOKUP_PORT=$low\$/d" /etc/iplookup/iplookup.env
inside systemctl daemon-reload
inside systemctl restart iplookup
answers || fail "not answering on 8080 once the drop-in was removed"
echo "--- upgrade: restarted"
before=$(main_pid)
inside dpkg -i "$deb" > /dev/null
answers || fail "not answering when the upgrade's restart returned"
[ "$(main_pid)" != "$before" ] || fail "the upgrade did not restart the service"
echo "restarted by the upgrade"
echo "--- systemd-analyze security"
inside systemd-analyze security iplookup --no-pager | tail -1
echo "--- remove: stopped, state and environment file kept"
inside dpkg -r iplookup > /dev/null
[ "$(inside systemctl is-active iplookup || true)" = inactive ] || fail "still running after remove"
inside test -f /var/lib/private/iplookup/state.db || fail "the state was not kept on remove"
inside test -f /etc/iplookup/iplookup.env || fail "the environment file was not kept on remove"
echo "stopped; state and environment file kept"
echo "--- purge: state and configuration deleted"
inside dpkg --purge iplookup > /dev/null
inside test ! -e /var/lib/private/iplookup || fail "the state is still there after purge"
inside test ! -e /etc/iplookup || fail "/etc/iplookup is still there after purge: $(inside ls -A /etc/iplookup)"
inside test ! -L /etc/systemd/system/multi-user.target.wants/iplookup.service || fail "the link of enable --now is still there after purge"
echo "state, /etc/iplookup and the enabled service's link deleted"
