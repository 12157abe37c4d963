#!/usr/bin/env bash
# Runs the Windows test binaries under Wine (make wine-test): persistence, runtime, policy's
# Windows tests and cmd/acp-agent, against an agent binary built for Windows. Each binary runs in
# its package directory, as go test runs it. Tests Wine cannot show skip themselves, saying why
# (internal/winetest.NeedsRealWindows). Needs $WINE (source .ci/wine/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${WINE:?source .ci/wine/setup.sh first}"
out=$(mktemp -d /tmp/acp-agent-wine.XXXXXX)
trap 'rm -rf "$out"' EXIT
tags=(-trimpath -tags winetest -ldflags=-checklinkname=0) # -trimpath: shares make cross's compile cache
export GOOS=windows GOARCH=amd64 CGO_ENABLED=0
go build "${tags[@]}" -o "$out/acp-agent.exe" ./cmd/acp-agent
for pkg in persistence runtime runtime/keychain policy cmd/acp-agent; do
  go test -c "${tags[@]}" -o "$out/${pkg//\//_}.test.exe" "./$pkg"
done
unset GOOS GOARCH CGO_ENABLED
winpath() { echo "Z:${1//\//\\}"; }
status=0
run() { # run PKG ARGS...: one test binary, in its package directory
  local pkg=$1; shift
  local start=$SECONDS
  if (cd "$pkg" && ACP_AGENT_TEST_BIN=$(winpath "$out/acp-agent.exe") \
      timeout 600 "$WINE" "$out/${pkg//\//_}.test.exe" -test.count=1 -test.timeout 9m "$@" >"$out/log" 2>&1); then
    echo "ok    $pkg (wine, $((SECONDS - start))s, $(grep -c '^--- SKIP' "$out/log" || true) skipped)"
  else
    echo "FAIL  $pkg (wine)"; grep -v 'level=INFO' "$out/log" | tail -60; status=1
  fi
}
# Truncation at every offset tests the recovery logic, not the OS, and
# takes minutes under Wine's file I/O: the Linux run has it. The kill -9
# loop keeps 20 of its 200 runs (TerminateProcess mid-write).
KILL9_RUNS=20 run persistence -test.v -test.skip 'TestOpenAfterTruncationAtEveryOffset'
run runtime -test.v
run runtime/keychain -test.v
run policy -test.v -test.run 'Windows|Canonical|Unparsed'
# Interim, until these are made portable or marked (each fails or times
# out under Wine today): serve/connect, the rewind-integrity and content-
# door tests, and the Dockerfile check.
run cmd/acp-agent -test.v -test.skip 'TestServe|TestConnect|TestV2OverStreamable|TestBinaryContentDoorsKeepTheFileToolsRules|TestDockerfileBuildsAStaticBinary|TestBinaryBackgroundCommandsDieWithTheSessionUnderAnEditorTerminal|TestBinaryRewindRefusedWhileATurnRunsChangesNothing|TestBinaryCommandChangesSurviveKill9|TestBinaryRewindThatCannotRestoreIsRefusedFirst|TestBinaryCommandCheckpointsAfterCloseAndWhatCannotBeRestored'
exit $status
