#!/usr/bin/env bash
# Checks what `bun run release` wrote to dist/ (CONTRACT §17): the checksums, the
# tarballs' contents (their third-party notices naming every package of the SBOM), each .deb with dpkg-deb and lintian (no error, no warning: the
# overrides in packaging/debian/lintian-overrides say why each remaining tag is there),
# the unit with systemd-analyze, and the arm64 executable under Debian's qemu-user:
# --version, an offline lookup, and serve answering a lookup over loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
version=$(node -p 'require("./package.json").version')
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill -9 "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cd dist

echo "--- checksums and sizes"
sha256sum --check SHA256SUMS
ls -l --block-size=K $(cut -d' ' -f3 SHA256SUMS)

echo "--- tarballs"
for target in linux-x64 linux-arm64; do
  folder="iplookup-$version-$target"
  listed=$(tar -tzf "$folder.tar.gz" | sort | tr '\n' ' ')
  # The README's links find the guides and the hosting list beside it (src/build/shipped-docs.ts);
  # the unit and the configuration file are there for a unit of one's own (install.md).
  expected=$({ printf '%s\n' "$folder/" "$folder/DATA-LICENSES.md" "$folder/LICENSE" "$folder/README.md" "$folder/THIRD-PARTY-NOTICES" "$folder/iplookup" \
                 "$folder/data/" "$folder/data/hosting-asns.csv" "$folder/docs/" \
                 "$folder/packaging/" "$folder/packaging/iplookup.service" "$folder/packaging/iplookup.toml"
               (cd "$root" && find docs -maxdepth 1 -type f) | sed "s|^|$folder/|"; } | sort | tr '\n' ' ')
  [ "$listed" = "$expected" ] || { echo "iplookup-$version-$target.tar.gz holds: $listed"; exit 1; }
  # Its notices name every npm package the SBOM lists, and Bun's licence at its tag.
  tar -xzOf "$folder.tar.gz" "$folder/THIRD-PARTY-NOTICES" > "$work/notices"
  jq -r '.components[] | select(.type == "library") | "\(.name) \(.version) ("' "iplookup-$version.cdx.json" > "$work/libraries"
  [ -s "$work/libraries" ]
  while read -r library; do grep -qF "$library" "$work/notices" || { echo "$folder/THIRD-PARTY-NOTICES does not name $library…"; exit 1; }; done < "$work/libraries"
  grep -qF "https://github.com/oven-sh/bun/blob/bun-v$(jq -r '.components[] | select(.name == "bun") | .version' "iplookup-$version.cdx.json")/LICENSE.md" "$work/notices"
done

echo "--- .debs"
for arch in amd64 arm64; do
  deb="iplookup_${version}_$arch.deb"
  dpkg-deb --field "$deb" Package Version Architecture Depends
  [ "$(dpkg-deb --field "$deb" Architecture)" = "$arch" ]
  dpkg-deb --contents "$deb" | awk '{print $6}' > "$work/contents"
  for path in ./usr/bin/iplookup ./lib/systemd/system/iplookup.service ./etc/iplookup/iplookup.toml \
              ./usr/share/doc/iplookup/copyright ./usr/share/doc/iplookup/THIRD-PARTY-NOTICES ./usr/share/doc/iplookup/README.md ./usr/share/doc/iplookup/docs/install.md \
              ./usr/share/doc/iplookup/data/hosting-asns.csv ./usr/share/lintian/overrides/iplookup; do
    grep -qx "$path" "$work/contents" || { echo "$deb lacks $path"; exit 1; }
  done
  dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/iplookup/iplookup.toml
done
# lintian takes a while: it runs on both packages while the arm64 executable is tested.
lintian --fail-on error,warning iplookup_"$version"_amd64.deb iplookup_"$version"_arm64.deb > "$work/lintian" 2>&1 &
lintian_pid=$!

echo "--- the unit"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze security --offline=yes --no-pager "$root/packaging/iplookup.service" | tail -1 | tee "$work/security"
  grep -Eq ': [0-9.]+ (PERFECT|SAFE|OK) ' "$work/security"
else
  echo "systemd-analyze is not installed: unit not rated"
fi

echo "--- linux-arm64 under qemu-user"
qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
arm="$PWD/iplookup-$version-linux-arm64"
"${qemu[@]}" "$arm" --version | tee "$work/version"
grep -q "^iplookup $version$" "$work/version"
"${qemu[@]}" "$arm" lookup 1.1.1.1 | tee "$work/lookup"
grep -q '"asn":13335' "$work/lookup"
# The embedded data is the default data, its hosting list included (AS13335 is on it).
grep -q '"hosting":true' "$work/lookup"
key=$("${qemu[@]}" "$arm" keys create --name ci --json --state "$work/state.db" | jq -r .key)
"${qemu[@]}" "$arm" serve --host 127.0.0.1 --port 0 --workers 1 --admin-port off --state "$work/state.db" 2> "$work/serve.log" &
server=$!
url=
for _ in $(seq 1 240); do
  url=$(grep -o '"listen":"[^"]*"' "$work/serve.log" | head -1 | cut -d'"' -f4 || true)
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.log"; exit 1; }
  sleep 0.5
done
[ -n "$url" ] || { echo "the arm64 server did not start within 120 s"; cat "$work/serve.log"; exit 1; }
curl -sS --fail-with-body "${url%/}/v1/lookup" -H "Authorization: Bearer $key" \
     -H 'Content-Type: application/json' -d '{"ip":"2606:4700:4700::1111"}' | tee "$work/served"
echo
grep -q '"asn":13335' "$work/served"
kill -TERM "$server"
# Its log on a failed stop tells whether the server had said "stopped" (a fault at the
# emulated process's exit) or not (a fault in the stop itself).
wait "$server" || { status=$?; echo "the arm64 server's stop failed (exit $status); its log:"; cat "$work/serve.log"; exit "$status"; }
server=
echo "arm64 binary: version, lookup and serve OK"

echo "--- lintian (no output: no tag but those overridden, each with its reason)"
lintian_status=0
wait "$lintian_pid" || lintian_status=$?
grep -v 'running with root privileges' "$work/lintian" || true
[ "$lintian_status" -eq 0 ] || { echo "lintian failed (exit $lintian_status)"; exit 1; }
echo "lintian: clean"
