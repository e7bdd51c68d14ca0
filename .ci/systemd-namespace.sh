# Sourced by the CI scripts that need a running systemd where the machine has none (a CI
# container): systemd as PID 1 of new PID and mount namespaces, with a /run of its own
# and a default target that starts nothing.
#
# The namespaces share the machine's files, so what boot-time units would do to them is
# kept out: the units that empty /tmp, set sysctls, the clock or the random seed, load
# modules or run udev are masked in the private /run, the journal is kept in memory,
# /tmp and /var/tmp are private, /etc/machine-id is a private copy, and the image's
# policy-rc.d (which forbids starting services in containers) is hidden in the
# namespace only. What the services started in it write elsewhere (/etc, /var/lib) is
# the machine's: the caller removes it.
#
#   systemd_namespace_start WORKDIR  starts it (WORKDIR: a directory for its files);
#                                    returns 1, saying why, where it cannot
#   inside COMMAND…                  runs COMMAND in the namespaces, stdin closed, for at
#                                    most INSIDE_TIMEOUT seconds (120)
#   systemd_namespace_stop           ends systemd and every process in the namespaces

SYSTEMD_INIT=

systemd_namespace_start() {
  local work=$1 unshare_pid state
  if [ "$(id -u)" != 0 ]; then echo "no systemd in namespaces: not root"; return 1; fi
  if [ ! -x /lib/systemd/systemd ]; then echo "no systemd in namespaces: systemd is not installed"; return 1; fi
  if ! command -v unshare >/dev/null || ! command -v nsenter >/dev/null; then echo "no systemd in namespaces: no unshare or nsenter"; return 1; fi
  if ! unshare --pid --fork --mount true 2>/dev/null; then echo "no systemd in namespaces: they cannot be made here"; return 1; fi
  cat > "$work/boot.sh" <<'BOOT'
#!/bin/bash
set -e
mount --make-rprivate /
mount -t proc proc /proc
mount -t tmpfs tmpfs /run
mkdir -p /run/lock /run/systemd/system /run/systemd/journald.conf.d
printf '[Unit]\nDescription=nothing but the units asked for\n' > /run/systemd/system/minimal.target
for unit in systemd-tmpfiles-setup.service systemd-tmpfiles-setup-dev.service systemd-tmpfiles-clean.timer \
  systemd-sysctl.service systemd-modules-load.service systemd-udevd.service systemd-udev-trigger.service \
  systemd-random-seed.service systemd-timesyncd.service systemd-remount-fs.service systemd-update-utmp.service \
  systemd-machine-id-commit.service systemd-journal-flush.service; do
  ln -s /dev/null "/run/systemd/system/$unit"
done
printf '[Journal]\nStorage=volatile\n' > /run/systemd/journald.conf.d/volatile.conf
cp /etc/machine-id "$WORK/machine-id" 2>/dev/null || : > "$WORK/machine-id"
mount --bind "$WORK/machine-id" /etc/machine-id
printf '#!/bin/sh\nexit 0\n' > "$WORK/policy-rc.d"
chmod +x "$WORK/policy-rc.d"
if [ -e /usr/sbin/policy-rc.d ]; then mount --bind "$WORK/policy-rc.d" /usr/sbin/policy-rc.d; fi
# Services' private /tmp and /var/tmp are made in these.
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /var/tmp
export container=iplookup-ci
exec /lib/systemd/systemd --system --unit=minimal.target
BOOT
  chmod +x "$work/boot.sh"
  WORK=$work unshare --pid --fork --mount "$work/boot.sh" > "$work/systemd.log" 2>&1 &
  unshare_pid=$!
  for _ in $(seq 1 100); do
    SYSTEMD_INIT=$(pgrep -P "$unshare_pid" -x systemd || true)
    [ -n "$SYSTEMD_INIT" ] && break
    sleep 0.1
  done
  if [ -z "$SYSTEMD_INIT" ]; then cat "$work/systemd.log"; echo "no systemd in namespaces: it did not start"; return 1; fi
  for _ in $(seq 1 100); do
    state=$(inside systemctl is-system-running 2>/dev/null || true)
    case "$state" in running | degraded) break ;; esac
    sleep 0.2
  done
  # systemd-run asks systemd over the system bus.
  inside systemctl start dbus.socket
  local version
  version=$(inside systemctl --version)
  echo "${version%%$'\n'*} in namespaces of its own: $state"
}

inside() {
  timeout "${INSIDE_TIMEOUT:-120}" nsenter -t "$SYSTEMD_INIT" -m -p "$@" < /dev/null
}

systemd_namespace_stop() {
  if [ -n "$SYSTEMD_INIT" ]; then
    kill -9 "$SYSTEMD_INIT" 2>/dev/null || true
    while kill -0 "$SYSTEMD_INIT" 2>/dev/null; do sleep 0.1; done
  fi
  SYSTEMD_INIT=
}
