#!/usr/bin/env bash
# Runs the Windows test binaries under Wine (make wine-test): winetest itself, persistence,
# runtime, policy's Windows tests and cmd/acp-agent, against an agent binary built for Windows. Each binary runs in
# its package directory, as go test runs it. Tests Wine cannot show skip themselves, saying why
# (internal/winetest.NeedsRealWindows). Needs $WINE (source .ci/wine/setup.sh).
#   usage: .ci/wine/test.sh [PKG...]   (default: all of them; e.g. .ci/wine/test.sh cmd/acp-agent)
#   KEEP=1 keeps the binaries and logs in /tmp/acp-agent-wine.*.
# A failure prints every failed test with its own output, then the log's tail (a panic or a
# timeout belongs to no test).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${WINE:?source .ci/wine/setup.sh first}"
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(internal/winetest persistence runtime runtime/keychain policy cmd/acp-agent)
out=$(mktemp -d /tmp/acp-agent-wine.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$out"' EXIT
tags=(-trimpath -tags winetest -ldflags=-checklinkname=0) # -trimpath: shares make cross's compile cache
export GOOS=windows GOARCH=amd64 CGO_ENABLED=0
go build "${tags[@]}" -o "$out/acp-agent.exe" ./cmd/acp-agent
for pkg in "${pkgs[@]}"; do
  go test -c "${tags[@]}" -o "$out/${pkg//\//_}.test.exe" "./$pkg"
done
unset GOOS GOARCH CGO_ENABLED
winpath() { echo "Z:${1//\//\\}"; }
# failed < LOG: each failed test's lines (go test -v names the test whose
# output follows with === RUN/CONT/NAME), without the agent's INFO logs.
failed() {
  awk '/^=== (RUN|CONT|NAME|PAUSE) / { cur = $3; next }
       /^ *--- (FAIL|PASS|SKIP): / { if ($2 == "FAIL:") { print; printf "%s", buf[$3] } delete buf[$3]; next }
       !/level=INFO/ { buf[cur] = buf[cur] $0 "\n" }'
}
run() { # run NAME PKG ARGS...: one test binary in its package directory; the verdict in $out/NAME.res
  local name=$1 pkg=$2; shift 2
  local start=$SECONDS log="$out/$name.log"
  if (cd "$pkg" && ACP_AGENT_TEST_BIN=$(winpath "$out/acp-agent.exe") \
      timeout 780 "$WINE" "$out/${pkg//\//_}.test.exe" -test.count=1 -test.timeout 12m "$@" >"$log" 2>&1); then
    echo "ok    $name (wine, $((SECONDS - start))s, $(grep -c '^--- SKIP' "$log" || true) skipped)" >"$out/$name.res"
  else
    { echo "FAIL  $name (wine, $((SECONDS - start))s)"
      failed <"$log"
      # A panic or a timeout names its cause at its start, not in the
      # goroutine dump's tail.
      if grep -qE '^(panic: |fatal error: )' "$log"; then
        echo "--- the log from its panic:"
        grep -v 'level=INFO' "$log" | sed -nE '/^(panic: |fatal error: )/,$p' | head -40
      fi
      echo "--- the log's last lines:"
      grep -v 'level=INFO' "$log" | tail -30; } >"$out/$name.res"
  fi
}
want() { [[ " ${pkgs[*]} " == *" $1 "* ]]; }
# Three lanes at once (Wine spends much of its time waiting on wineserver
# and process start-up): the small packages one after the other, and
# cmd/acp-agent's tests dealt round-robin into two shards.
small() {
  # Truncation at every offset tests the recovery logic, not the OS, and
  # takes minutes under Wine's file I/O: the Linux run has it. The kill -9
  # loop keeps 20 of its 200 runs (TerminateProcess mid-write).
  ! want internal/winetest || run winetest internal/winetest -test.v
  ! want persistence || KILL9_RUNS=20 run persistence persistence -test.v -test.skip 'TestOpenAfterTruncationAtEveryOffset'
  ! want runtime || run runtime runtime -test.v
  ! want runtime/keychain || run runtime_keychain runtime/keychain -test.v
  ! want policy || run policy policy -test.v -test.run 'Windows|Canonical|Unparsed'
}
small &
lanes=($!)
if want cmd/acp-agent; then
  for try in 1 2 3; do # Wine may fail to start a process on a loaded machine
    (cd cmd/acp-agent && ACP_AGENT_TEST_BIN=$(winpath "$out/acp-agent.exe") "$WINE" "$out/cmd_acp-agent.test.exe" -test.list '.*' 2>&1 |
      tr -d '\r' | grep '^Test' >"$out/tests") && break
  done
  [ -s "$out/tests" ] || echo "FAIL  cmd/acp-agent: its tests could not be listed under Wine" >"$out/cmd_acp-agent.res"
  # The slow tests (tens of seconds under Wine) are dealt first, so that
  # each shard gets its share of them.
  slow='Rewind|Kill9|ForkListDelete|Golden|Racing|Concurrent|EveryEdit'
  # The tests that store a key with acp-agent login share Windows'
  # credential store (one per Wine prefix, whatever HOME says): they run
  # in one shard, one after the other, so none reads another's key.
  together='Login'
  for shard in 0 1; do
    re=$({ grep -E "$slow" "$out/tests" || true; grep -vE "$slow" "$out/tests" || true; } |
      awk -v s=$shard -v t="$together" '$0 ~ t { if (s == 0) print; next } { n++ } n % 2 == s' | paste -sd'|')
    run "cmd_acp-agent_$shard" cmd/acp-agent -test.v -test.run "^($re)\$" &
    lanes+=($!)
  done
fi
wait "${lanes[@]}"
status=0
for res in "$out"/*.res; do
  cat "$res"
  ! grep -q '^FAIL' "$res" || status=1
done
exit $status
