//go:build linux

package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CommandSpec.Output sees every byte as it is written, also the bytes the
// kept tail has dropped.
func TestOutputHookSeesAllTheOutputAsItComes(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	var mu sync.Mutex
	var seen strings.Builder
	first := make(chan struct{})
	var once sync.Once
	// It goes on when the test has seen its first line.
	spec := sh("echo early; while [ ! -e go-on ]; do sleep 0.01; done; head -c 5000 /dev/zero | tr '\\0' x")
	spec.OutputByteLimit = 100
	spec.Output = func(p []byte) {
		mu.Lock()
		seen.Write(p)
		mu.Unlock()
		once.Do(func() { close(first) })
	}
	spec.Cwd = t.TempDir()
	done := make(chan CommandResult, 1)
	go func() {
		res, err := term.Run(context.Background(), spec, nil)
		assert.NoError(t, err)
		done <- res
	}()
	select {
	case <-first:
	case <-time.After(10 * time.Second):
		require.NoError(t, os.WriteFile(filepath.Join(spec.Cwd, "go-on"), nil, 0o600))
		<-done
		t.Fatal("no output while the command runs")
	}
	mu.Lock()
	assert.Equal(t, "early\n", seen.String(), "the first line, while the command runs")
	mu.Unlock()
	require.NoError(t, os.WriteFile(filepath.Join(spec.Cwd, "go-on"), nil, 0o600))
	res := <-done
	assert.True(t, res.Truncated)
	assert.Len(t, res.Output, 100)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "early\n"+strings.Repeat("x", 5000), seen.String())
}

// Closing CommandSpec.Stop kills the command; Run returns what it printed
// and the signal, not an error.
func TestStopKillsTheCommandAndRunReturnsItsOutput(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{KillGrace: 200 * time.Millisecond})
	stop := make(chan struct{})
	started := make(chan struct{})
	var once sync.Once
	spec := sh("echo running; exec sleep 60")
	spec.Cwd, spec.Stop = t.TempDir(), stop
	spec.Output = func([]byte) { once.Do(func() { close(started) }) }
	done := make(chan CommandResult, 1)
	go func() {
		res, err := term.Run(context.Background(), spec, nil)
		assert.NoError(t, err)
		done <- res
	}()
	<-started
	close(stop)
	select {
	case res := <-done:
		assert.Equal(t, "running\n", res.Output)
		assert.Nil(t, res.ExitCode)
		assert.Equal(t, "SIGTERM", res.Signal)
		assert.False(t, res.TimedOut)
	case <-time.After(20 * time.Second):
		require.FailNow(t, "Stop did not stop the command")
	}
}
