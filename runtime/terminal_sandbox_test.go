//go:build linux

package runtime

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// newConfinedTerminal is newTestTerminal with the sandbox on: the test
// binary is the helper (TestMain calls sandbox.Main). It returns the
// workspace the policy lets commands write.
func newConfinedTerminal(t *testing.T, opts TerminalOptions) (*LocalTerminal, string) {
	t.Helper()
	if st := sandbox.Probe(); !st.Available {
		t.Skip("no sandbox on this kernel:", st.Reason)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	opts.Sandbox = &Sandbox{Exe: exe, Policy: sandbox.Policy{WritableRoots: []string{dir}, TempDir: t.TempDir()}}
	return newTestTerminal(t, opts), dir
}

func TestConfinedCommandReportsOutputExitCodeAndTMPDIR(t *testing.T) {
	term, dir := newConfinedTerminal(t, TerminalOptions{})
	p := termStart(t, term, CommandSpec{Command: "sh", Args: []string{"-c", `echo out; echo err >&2; read x || echo "stdin empty"; echo "$TMPDIR"; exit 7`}, Cwd: dir})
	st := termWait(t, p, 10*time.Second)
	require.NotNil(t, st.ExitCode)
	require.Equal(t, 7, *st.ExitCode)
	out, _, _ := p.Output()
	require.Equal(t, "out\nerr\nstdin empty\n"+term.sandbox.Policy.TempDir+"\n", out)
}

func TestConfinedCommandCannotWriteOutsideItsWorkspace(t *testing.T) {
	term, dir := newConfinedTerminal(t, TerminalOptions{})
	outside := t.TempDir()
	p := termStart(t, term, CommandSpec{Command: "sh", Args: []string{"-c", "echo x > " + outside + "/f"}, Cwd: dir})
	st := termWait(t, p, 10*time.Second)
	require.NotEqual(t, 0, *st.ExitCode)
	require.NoFileExists(t, outside+"/f")
}

func TestConfinedTimeoutKillsTheGroupWithTERMThenKILL(t *testing.T) {
	for name, script := range map[string]string{
		"SIGTERM": "sleep 100 & sleep 100",
		"SIGKILL": `trap "" TERM; sleep 100 & sleep 100`,
	} {
		t.Run(name, func(t *testing.T) {
			term, dir := newConfinedTerminal(t, TerminalOptions{KillGrace: 200 * time.Millisecond})
			spec := CommandSpec{Command: "sh", Args: []string{"-c", script}, Cwd: dir, Timeout: 300 * time.Millisecond}
			p := termStart(t, term, spec)
			st := termWait(t, p, 5*time.Second)
			require.True(t, st.TimedOut)
			require.Nil(t, st.ExitCode)
			require.Equal(t, name, st.Signal)
			requireGroupGone(t, p.Pid(), time.Second)
		})
	}
}

func TestConfinedContextCancelKillsTheCommand(t *testing.T) {
	term, dir := newConfinedTerminal(t, TerminalOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := term.Start(ctx, CommandSpec{Command: "sleep", Args: []string{"100"}, Cwd: dir})
	require.NoError(t, err)
	cancel()
	st := termWait(t, p, 5*time.Second)
	require.True(t, st.TimedOut)
	require.Equal(t, "SIGTERM", st.Signal)
}

// Unlike an unconfined command's (TestSetsidDescendantEscapesGroupKill...),
// a confined command's setsid descendant dies with it.
func TestConfinedSetsidDescendantDiesWithTheCommand(t *testing.T) {
	term, dir := newConfinedTerminal(t, TerminalOptions{})
	p := termStart(t, term, CommandSpec{Command: "sh", Args: []string{"-c", "setsid sleep 100 >/dev/null 2>&1 & echo $!"}, Cwd: dir})
	st := termWait(t, p, 10*time.Second)
	require.Equal(t, 0, *st.ExitCode)
	out, _, _ := p.Output()
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(t, err, "output %q", out)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	require.False(t, processAlive(pid), "the setsid grandchild outlived its command")
}

func TestConfinedCloseKillsEveryCommandAndRefusesStart(t *testing.T) {
	term, dir := newConfinedTerminal(t, TerminalOptions{KillGrace: 100 * time.Millisecond})
	var procs []*Process
	for range 3 {
		p, err := term.Start(context.Background(), CommandSpec{Command: "sh", Args: []string{"-c", "sleep 100 & sleep 100"}, Cwd: dir})
		require.NoError(t, err)
		procs = append(procs, p)
	}
	require.NoError(t, term.Close())
	for _, p := range procs {
		_, _, exit := p.Output()
		require.NotNil(t, exit)
		requireGroupGone(t, p.Pid(), time.Second)
	}
	_, err := term.Start(context.Background(), CommandSpec{Command: "true", Cwd: dir})
	require.ErrorIs(t, err, ErrTerminalClosed)
}

// A command started in a cgroup goes through the helper's second stage
// (clone3, which CLONE_INTO_CGROUP needs, is refused by the filter): it
// is in its cgroup and still under the seccomp filter, which refuses a
// user namespace.
func TestConfinedCommandStartsInItsCgroup(t *testing.T) {
	parent := cgroupParentForTest(t)
	term, dir := newConfinedTerminal(t, TerminalOptions{CgroupParent: parent})
	script := "cat /proc/self/cgroup; grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status; unshare -U true && echo USERNS-CREATED; exit 0"
	p := termStart(t, term, CommandSpec{Command: "sh", Args: []string{"-c", script}, Cwd: dir})
	st := termWait(t, p, 10*time.Second)
	require.Equal(t, 0, *st.ExitCode)
	out, _, _ := p.Output()
	require.Contains(t, out, "acp-agent-"+strconv.Itoa(os.Getpid()), "the command is not in its own cgroup")
	require.Regexp(t, `Seccomp:\s+2`, out, "no seccomp filter")
	require.Regexp(t, `NoNewPrivs:\s+1`, out)
	require.NotContains(t, out, "USERNS-CREATED", "the filter let a user namespace be created")
	require.NoError(t, p.Release())
}

// Stdin and Stderr (what project hooks need): the input reaches the
// command, stderr comes apart from the output, confined or not; a
// command that never reads a large input still ends.
func TestStdinAndSeparateStderrConfinedAndNot(t *testing.T) {
	confined, dir := newConfinedTerminal(t, TerminalOptions{})
	for name, term := range map[string]*LocalTerminal{"confined": confined, "local": newTestTerminal(t, TerminalOptions{})} {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			p := termStart(t, term, CommandSpec{Command: "sh", Args: []string{"-c", "cat; echo ERR >&2; exit 2"}, Cwd: dir,
				Stdin: []byte(`{"event":"x"}`), Stderr: &stderr})
			st := termWait(t, p, 10*time.Second)
			require.Equal(t, 2, *st.ExitCode)
			out, _, _ := p.Output()
			require.Equal(t, `{"event":"x"}`, out)
			require.Equal(t, "ERR\n", stderr.String())

			p = termStart(t, term, CommandSpec{Command: "true", Cwd: dir, Stdin: bytes.Repeat([]byte("x"), 1<<20)})
			st = termWait(t, p, 10*time.Second)
			require.Equal(t, 0, *st.ExitCode)
		})
	}
}

// helperPids are the sandbox helpers this process runs: its children
// started with the helper argument.
func helperPids(t *testing.T) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	require.NoError(t, err)
	var pids []int
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces, not ")".
		rest := string(data[bytes.LastIndexByte(data, ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) || fields[0] == "Z" {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "cmdline"))
		if args := strings.Split(string(cmdline), "\x00"); len(args) > 1 && args[1] == sandbox.HelperArg {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// Making a confined terminal starts no sandbox helper: a helper is a
// program's start-up and a listing of the workspace, CPU that a session's
// first turn running no command keeps. Warm starts one, and the first
// command runs in it.
func TestAConfinedTerminalStartsItsHelperWhenWarmedNotWhenMade(t *testing.T) {
	t.Cleanup(sandbox.StopSpare)
	sandbox.StopSpare()
	term, dir := newConfinedTerminal(t, TerminalOptions{})
	require.Empty(t, helperPids(t), "no helper when the terminal is made")
	term.Warm()
	pids := helperPids(t)
	require.Len(t, pids, 1, "Warm started the helper")
	term.Warm()
	assert.Equal(t, pids, helperPids(t), "a second Warm starts no other")
	p := termStart(t, term, CommandSpec{Command: "sh", Args: []string{"-c", "echo $PPID"}, Cwd: dir})
	st := termWait(t, p, 10*time.Second)
	require.Equal(t, 0, *st.ExitCode)
	out, _, _ := p.Output()
	assert.Equal(t, strconv.Itoa(pids[0]), strings.TrimSpace(out), "the first command ran in the warmed helper")
}
