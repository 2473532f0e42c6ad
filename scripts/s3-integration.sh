#!/usr/bin/env bash
# Runs go test with a real S3-compatible server on loopback: installs
# versitygw (pinned) into ./bin if missing, starts it on a free port over a
# temporary folder, runs go test with RECON_TEST_S3_* pointing at it (tests
# that use S3 then run against versitygw as well as gofakes3), and stops it
# whatever happens. Usage: scripts/s3-integration.sh [go test flags] [packages]
set -euo pipefail

VERSITYGW_VERSION="${VERSITYGW_VERSION:-v1.8.0}"
GO="${GO:-go}"
TAGS="${TAGS:-duckdb_arrow}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/bin"
gw="$bin/versitygw"

if ! "$GO" version -m "$gw" 2>/dev/null | grep -Eq "mod[[:space:]]+github.com/versity/versitygw[[:space:]]+$VERSITYGW_VERSION[[:space:]]"; then
	echo "s3-integration: installing versitygw $VERSITYGW_VERSION into $bin"
	mkdir -p "$bin"
	GOBIN="$bin" CGO_ENABLED=0 "$GO" install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
fi

# A free port: the first one nobody answers on.
port=""
for p in $(seq 17070 17170); do
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || { echo "s3-integration: no free port in 17070..17170" >&2; exit 1; }

data="$(mktemp -d)"
pid=""
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$data"
}
trap cleanup EXIT

export ROOT_ACCESS_KEY="recon-test-access" ROOT_SECRET_KEY="recon-test-secret"
mkdir -p "$data/gw"
"$gw" --port "127.0.0.1:$port" --quiet posix "$data/gw" >"$data/versitygw.log" 2>&1 &
pid=$!

for _ in $(seq 1 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "s3-integration: versitygw exited:" >&2; cat "$data/versitygw.log" >&2; exit 1
	fi
	sleep 0.1
done
echo "s3-integration: versitygw $VERSITYGW_VERSION on 127.0.0.1:$port (pid $pid)"

export RECON_TEST_S3_ENDPOINT="http://127.0.0.1:$port"
export RECON_TEST_S3_ACCESS_KEY="$ROOT_ACCESS_KEY" RECON_TEST_S3_SECRET_KEY="$ROOT_SECRET_KEY"
export RECON_TEST_VERSITYGW="$gw"
cd "$root"
"$GO" test -tags "$TAGS" "$@"
