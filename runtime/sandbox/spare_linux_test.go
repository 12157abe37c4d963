//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// sparePid is the pid of the process's spare helper (0: none).
func sparePid() int {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.p == nil {
		return 0
	}
	return spare.p.cmd.Process.Pid
}

// A terminal made (Warm) has a helper started for its first command: that
// command runs under it, confined as any other (a write outside its
// roots is refused), and the next Launcher's Warm starts another.
func TestWarmStartsTheHelperTheFirstCommandRunsUnder(t *testing.T) {
	t.Cleanup(StopSpare)
	StopSpare()
	l, pol := newTestLauncher(t)
	l.Warm(pol)
	pid := sparePid()
	require.NotZero(t, pid, "Warm started a spare helper")
	outside := t.TempDir()
	out, ws, err := run(t, l, pol, "echo $PPID; echo x > "+filepath.Join(outside, "f"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(pid), strings.Fields(out)[0], "the first command ran under the spare")
	assert.NotEqual(t, 0, ws.ExitStatus(), "the spare confines as any helper does")
	assert.NoFileExists(t, filepath.Join(outside, "f"))
	assert.Zero(t, sparePid(), "the spare was taken")

	// Warm again on a Launcher with an idle helper starts nothing.
	l.Warm(pol)
	assert.Zero(t, sparePid())
	l2, pol2 := newTestLauncher(t)
	l2.Warm(pol2)
	assert.NotZero(t, sparePid(), "another terminal gets a spare of its own")
	assert.NotEqual(t, pid, sparePid())
}

// A spare that died before its command (killed from outside) is not the
// command's failure: the command gets a new helper.
func TestADeadSpareIsReplacedByTheFirstCommand(t *testing.T) {
	t.Cleanup(StopSpare)
	StopSpare()
	l, pol := newTestLauncher(t)
	l.Warm(pol)
	pid := sparePid()
	require.NotZero(t, pid)
	require.NoError(t, unix.Kill(pid, unix.SIGKILL))
	out, ws, err := run(t, l, pol, "echo $PPID")
	require.NoError(t, err)
	assert.Equal(t, 0, ws.ExitStatus())
	assert.NotEqual(t, strconv.Itoa(pid), strings.TrimSpace(out))
}

// A helper that cannot start is the first command's error, as without
// Warm: Warm itself says nothing and leaves no spare.
func TestAHelperThatCannotStartFailsTheFirstCommand(t *testing.T) {
	t.Cleanup(StopSpare)
	StopSpare()
	l := NewLauncher(filepath.Join(t.TempDir(), "no-such-agent"))
	defer l.Close()
	dir := t.TempDir()
	l.Warm(Policy{WritableRoots: []string{dir}})
	assert.Zero(t, sparePid())
	_, err := l.Start(Request{Policy: Policy{WritableRoots: []string{dir}}, Path: "/bin/true", Argv: []string{"true"}, Dir: dir},
		[]*os.File{os.Stdin, os.Stdout, os.Stderr})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "start sandbox helper")
}

// StopSpare ends the spare and reaps it: nothing of it is left.
func TestStopSpareEndsTheSpare(t *testing.T) {
	StopSpare()
	l, pol := newTestLauncher(t)
	l.Warm(pol)
	pid := sparePid()
	require.NotZero(t, pid)
	StopSpare()
	assert.Zero(t, sparePid())
	// Waited for: not even a zombie is left under that pid.
	assert.ErrorIs(t, unix.Kill(pid, 0), unix.ESRCH)
}
