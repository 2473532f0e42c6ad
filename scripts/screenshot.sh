#!/usr/bin/env bash
# Renders summary.html to a PNG with headless chromium (Debian's package,
# installed with apt-get when missing). The page comes from eight runs of
# recon against the sandbox over sliding 7-day windows, so the trend chart
# has something to show. Usage: scripts/screenshot.sh path/to/recon out.png
set -euo pipefail

recon="$(realpath "${1:?usage: screenshot.sh RECON_BINARY OUT.png}")"
out="$(realpath -m "${2:-summary.png}")"

if ! command -v chromium >/dev/null; then
	echo "screenshot: installing Debian's chromium"
	sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

tmp="$(mktemp -d)"
sb=""
cleanup() {
	if [ -n "$sb" ]; then kill "$sb" 2>/dev/null || true; wait "$sb" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

port=""
for p in $(seq 18080 18180); do
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || { echo "screenshot: no free port" >&2; exit 1; }

start="$(date -u -d '21 days ago' +%F)"
"$recon" sandbox --addr "127.0.0.1:$port" --start "$start" --days 21 >"$tmp/sandbox.env" 2>"$tmp/sandbox.log" &
sb=$!
for _ in $(seq 1 100); do
	grep -q RECON_ACCOUNTS "$tmp/sandbox.env" 2>/dev/null && break
	sleep 0.1
done
eval "$(grep '^export ' "$tmp/sandbox.env")"
export RECON_DB="$tmp/recon.duckdb" RECON_ARCHIVE_URL="$tmp/archive" RECON_WORK_DIR="$tmp/work"

for i in $(seq 0 7); do
	from="$(date -u -d "$start + $i days" +%F)"
	to="$(date -u -d "$start + $((i + 6)) days" +%F)"
	"$recon" run --from "$from" --to "$to" >"$tmp/run-$i.log" 2>&1 || { cat "$tmp/run-$i.log" >&2; exit 1; }
	sleep 1 # run ids are UTC seconds
done

html="$(ls -t "$tmp"/archive/run_date=*/run_id=*/summary.html | head -1)"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,2100 \
	--screenshot="$out" "file://$html" 2>"$tmp/chromium.log" || { cat "$tmp/chromium.log" >&2; exit 1; }
echo "screenshot: $out (from $html)"
