package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waitBudget is how long a test waits for the agent to do one thing
// (answer a request, finish a turn, exit): long enough for the race
// build on a busy 2-core machine, so that only a hang fails, and short
// of the test binary's -timeout, so that the hang is reported with the
// agent's stderr rather than as a panic of the whole binary. How fast
// the agent is belongs in benchmarks, not here.
func waitBudget(t testing.TB) time.Duration {
	return min(testBudget(t), 2*time.Minute)
}

// testBudget is the time left before the test binary's -timeout, less a
// margin to report a failure in (at least 5 s; 10 minutes without a
// deadline): for the rare step whose length grows with the machine's
// load beyond waitBudget (the sandbox corpus runs 171 commands in one).
func testBudget(t testing.TB) time.Duration {
	const margin, least = 20 * time.Second, 5 * time.Second
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := dt.Deadline(); ok {
			return max(time.Until(dl)-margin, least)
		}
	}
	return 10 * time.Minute
}

// waitCtx is a context that ends after waitBudget, and with the test.
func waitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	t.Cleanup(cancel)
	return ctx
}

// testHome is a fresh HOME for an agent, with Go's telemetry off: a `go`
// command the agent runs (go version, go vet) otherwise starts a
// telemetry process that outlives it and writes under HOME, in the
// directory the test is removing.
func testHome(t testing.TB) string {
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "go", "telemetry")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mode"), []byte("off"), 0o600))
	return home
}

// agentEnv is the environment an agent of a test starts from: the test's
// PATH, goraceEnv, a fresh HOME (testHome) and TMPDIR (testTmp); never
// the machine's keys.
func agentEnv(t testing.TB) []string {
	return []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + testHome(t), "TMPDIR=" + testTmp(t)}
}

// testTmp is a fresh TMPDIR for an agent, under the test's temporary
// directory: the scratch directory of an agent a test kills (its
// commands' TMPDIRs) goes with the test, not into the machine's /tmp.
// Sticky and writable by all, as /tmp is: the sandbox tests run agents
// as nobody too.
func testTmp(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "tmp")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.Chmod(dir, 0o777|os.ModeSticky))
	return dir
}

// sdkLog is a logger for the coder ACP SDK's own diagnostics
// (conn.SetLogger), which would otherwise go to the test binary's
// output: they are kept, shown when the test fails, and an error the SDK
// logged (a message it could not parse, say) fails the test. Call it
// before registering the cleanup that waits for the agent, so that the
// check runs after the agent has exited.
func sdkLog(t testing.TB) *slog.Logger {
	var logs syncWriter
	t.Cleanup(func() {
		out := logs.String()
		if strings.Contains(out, "level=ERROR") {
			t.Errorf("the ACP SDK client logged errors:\n%s", out)
		} else if t.Failed() && out != "" {
			t.Logf("ACP SDK client log:\n%s", out)
		}
	})
	return slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// The longest tests here (over about 2 s on a busy machine: the sandbox
// corpus and workflow, the kill -9 loops, the serve limits) call
// t.Parallel: they wait on processes far more than they compute, so
// they overlap after the short ones have run. A parallel test must not
// use t.Setenv or anything else process-wide, and must not look at
// processes or files another test could own.
