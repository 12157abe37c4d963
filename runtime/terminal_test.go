//go:build linux

package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/policy"
)

// termTestPath is the fixed PATH the tests run with.
const termTestPath = policy.DefaultPath

func newTestTerminal(t *testing.T, opts TerminalOptions) *LocalTerminal {
	t.Helper()
	if opts.Env == nil {
		opts.Env = []string{"PATH=" + termTestPath, "LANG=C.UTF-8", "TERM=dumb"}
	}
	term := NewLocalTerminal(opts)
	t.Cleanup(func() { require.NoError(t, term.Close()) })
	return term
}

func termStart(t *testing.T, term *LocalTerminal, spec CommandSpec) *Process {
	t.Helper()
	if spec.Cwd == "" {
		spec.Cwd = t.TempDir()
	}
	p, err := term.Start(context.Background(), spec)
	require.NoError(t, err)
	return p
}

func termWait(t *testing.T, p *Process, within time.Duration) ExitStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	st, err := p.Wait(ctx)
	require.NoError(t, err, "Wait did not return within %v", within)
	return st
}

func sh(script string) CommandSpec {
	return CommandSpec{Command: "sh", Args: []string{"-c", script}}
}

// groupAlive reports whether any live (non-zombie) process is in process
// group pgid. kill(-pgid, 0) succeeds for zombies too, and orphaned
// zombies are reaped by whoever PID 1 is, so a /proc scan settles it.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, pg, ok := procStat(pid); ok && pg == pgid && st != 'Z' && st != 'X' {
			return true
		}
	}
	return false
}

// procStat returns the state and process group of pid from /proc.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp ...
	if len(f) < 3 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pg, true
}

func processAlive(pid int) bool {
	st, _, ok := procStat(pid)
	return ok && st != 'Z' && st != 'X'
}

func requireGroupGone(t *testing.T, pgid int, within time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool { return !groupAlive(pgid) }, within, 10*time.Millisecond,
		"process group %d still has live members", pgid)
}

func TestStartWaitReportsExitStatus(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	code := func(n int) *int { return &n }
	tests := []struct {
		name string
		spec CommandSpec
		want ExitStatus
	}{
		{"success", CommandSpec{Command: "true"}, ExitStatus{ExitCode: code(0)}},
		{"failure", CommandSpec{Command: "false"}, ExitStatus{ExitCode: code(1)}},
		{"exit code", sh("exit 7"), ExitStatus{ExitCode: code(7)}},
		{"killed by signal", sh("kill -TERM $$"), ExitStatus{Signal: "SIGTERM"}},
		{"killed by SIGKILL", sh("kill -KILL $$"), ExitStatus{Signal: "SIGKILL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := termStart(t, term, tt.spec)
			require.Equal(t, tt.want, termWait(t, p, 10*time.Second))
			_, _, exit := p.Output()
			require.Equal(t, &tt.want, exit)
			require.NoError(t, p.Release())
		})
	}
}

func TestOutputMergesStdoutAndStderrInOrder(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	p := termStart(t, term, sh("echo out1; echo err1 >&2; echo out2; echo err2 >&2"))
	termWait(t, p, 10*time.Second)
	out, truncated, _ := p.Output()
	require.Equal(t, "out1\nerr1\nout2\nerr2\n", out)
	require.False(t, truncated)
}

func TestOutputIsNilStatusWhileRunning(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{KillGrace: 100 * time.Millisecond})
	p := termStart(t, term, sh("echo started; exec sleep 100"))
	require.Eventually(t, func() bool {
		out, _, _ := p.Output()
		return out == "started\n"
	}, 5*time.Second, 5*time.Millisecond)
	_, _, exit := p.Output()
	require.Nil(t, exit)
	require.NoError(t, p.Release())
}

func TestStdinIsDevNull(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	p := termStart(t, term, CommandSpec{Command: "cat"})
	st := termWait(t, p, 5*time.Second)
	require.Equal(t, 0, *st.ExitCode)
}

func TestTimeoutKillsWholeProcessGroup(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	const timeout = 300 * time.Millisecond
	spec := sh("sleep 100 & sleep 100 & sleep 100")
	spec.Timeout = timeout
	start := time.Now()
	p := termStart(t, term, spec)
	st := termWait(t, p, timeout+2*time.Second)
	elapsed := time.Since(start)
	require.Less(t, elapsed, timeout+2*time.Second)
	require.GreaterOrEqual(t, elapsed, timeout)
	require.True(t, st.TimedOut)
	require.Nil(t, st.ExitCode)
	require.Equal(t, "SIGTERM", st.Signal)
	requireGroupGone(t, p.Pid(), time.Second)
}

func TestTimeoutEscalatesToSIGKILLWhenTERMIsIgnored(t *testing.T) {
	const grace = 200 * time.Millisecond
	term := newTestTerminal(t, TerminalOptions{KillGrace: grace})
	// An ignored signal stays ignored across exec, so the sleeps ignore
	// SIGTERM too.
	spec := sh(`trap "" TERM; sleep 100 & sleep 100`)
	spec.Timeout = 200 * time.Millisecond
	start := time.Now()
	p := termStart(t, term, spec)
	st := termWait(t, p, 5*time.Second)
	require.GreaterOrEqual(t, time.Since(start), spec.Timeout+grace)
	require.True(t, st.TimedOut)
	require.Equal(t, "SIGKILL", st.Signal)
	requireGroupGone(t, p.Pid(), time.Second)
}

func TestGrandchildHoldingThePipeDoesNotHangWait(t *testing.T) {
	const waitDelay = 200 * time.Millisecond
	term := newTestTerminal(t, TerminalOptions{WaitDelay: waitDelay})
	start := time.Now()
	p := termStart(t, term, sh("sleep 100 & echo done"))
	st := termWait(t, p, 5*time.Second)
	require.Less(t, time.Since(start), waitDelay+2*time.Second)
	require.Equal(t, 0, *st.ExitCode)
	require.False(t, st.TimedOut)
	out, _, _ := p.Output()
	require.Equal(t, "done\n", out)
	require.True(t, groupAlive(p.Pid()), "the background sleep outlives its parent until Release")
	require.NoError(t, p.Release())
	requireGroupGone(t, p.Pid(), time.Second)
}

func TestContextCancelKillsProcessGroup(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := term.Start(ctx, CommandSpec{Command: "sh", Args: []string{"-c", "sleep 100 & sleep 100"}, Cwd: t.TempDir()})
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)
	cancel()
	st := termWait(t, p, 3*time.Second)
	require.True(t, st.TimedOut)
	require.Equal(t, "SIGTERM", st.Signal)
	requireGroupGone(t, p.Pid(), time.Second)
}

func TestStartWithEndedContextStartsNothing(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := term.Start(ctx, CommandSpec{Command: "true", Cwd: t.TempDir()})
	require.ErrorIs(t, err, context.Canceled)
}

func TestWaitReturnsContextErrorWhileRunning(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{KillGrace: 100 * time.Millisecond})
	p := termStart(t, term, CommandSpec{Command: "sleep", Args: []string{"100"}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Wait(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.True(t, processAlive(p.Pid()), "an ended Wait does not kill the process")
}

func TestKillIsIdempotentAndEscalates(t *testing.T) {
	const grace = 200 * time.Millisecond
	term := newTestTerminal(t, TerminalOptions{KillGrace: grace})
	p := termStart(t, term, sh(`trap "" TERM; echo ready; sleep 100`))
	require.Eventually(t, func() bool { out, _, _ := p.Output(); return out == "ready\n" }, 5*time.Second, 5*time.Millisecond)
	start := time.Now()
	require.NoError(t, p.Kill())
	require.NoError(t, p.Kill())
	st := termWait(t, p, 5*time.Second)
	require.GreaterOrEqual(t, time.Since(start), grace)
	require.Equal(t, "SIGKILL", st.Signal)
	require.False(t, st.TimedOut, "an explicit Kill is not a timeout")
	require.NoError(t, p.Kill(), "Kill after exit is a no-op")
	requireGroupGone(t, p.Pid(), time.Second)
}

func TestReleaseAfterExitIsIdempotentAndKeepsOutput(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	p := termStart(t, term, sh("echo hi"))
	termWait(t, p, 5*time.Second)
	require.NoError(t, p.Release())
	require.NoError(t, p.Release())
	out, _, exit := p.Output()
	require.Equal(t, "hi\n", out)
	require.Equal(t, 0, *exit.ExitCode)
}

func TestReleaseKillsARunningProcess(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{KillGrace: 100 * time.Millisecond})
	p := termStart(t, term, sh("sleep 100 & sleep 100"))
	require.NoError(t, p.Release())
	_, _, exit := p.Output()
	require.NotNil(t, exit)
	require.Equal(t, "SIGTERM", exit.Signal)
	requireGroupGone(t, p.Pid(), time.Second)
}

func TestCloseKillsEveryProcessAndRefusesStart(t *testing.T) {
	term := NewLocalTerminal(TerminalOptions{Env: []string{"PATH=" + termTestPath}, KillGrace: 100 * time.Millisecond})
	var procs []*Process
	for range 3 {
		p, err := term.Start(context.Background(), CommandSpec{Command: "sh", Args: []string{"-c", "sleep 100 & sleep 100"}, Cwd: t.TempDir()})
		require.NoError(t, err)
		procs = append(procs, p)
	}
	require.NoError(t, term.Close())
	for _, p := range procs {
		_, _, exit := p.Output()
		require.NotNil(t, exit)
		requireGroupGone(t, p.Pid(), time.Second)
	}
	_, err := term.Start(context.Background(), CommandSpec{Command: "true", Cwd: t.TempDir()})
	require.ErrorIs(t, err, ErrTerminalClosed)
	require.NoError(t, term.Close(), "Close is idempotent")
}

func TestOutputLimitKeepsUTF8TailAndFlagsTruncation(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	dir := t.TempDir()
	var content strings.Builder
	for i := 0; content.Len() < 200_000; i++ {
		fmt.Fprintf(&content, "%d:aé€😀\n", i)
	}
	file := filepath.Join(dir, "multibyte.txt")
	require.NoError(t, os.WriteFile(file, []byte(content.String()), 0o644))
	for _, limit := range []int{1, 2, 3, 4, 5, 7, 101, 4096, 65537, 199_999} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			p := termStart(t, term, CommandSpec{Command: "cat", Args: []string{file}, Cwd: dir, OutputByteLimit: limit})
			termWait(t, p, 10*time.Second)
			out, truncated, _ := p.Output()
			require.True(t, truncated)
			require.LessOrEqual(t, len(out), limit)
			require.GreaterOrEqual(t, len(out), limit-(utf8.UTFMax-1))
			require.True(t, utf8.ValidString(out))
			require.True(t, strings.HasSuffix(content.String(), out))
			require.NoError(t, p.Release())
		})
	}
	t.Run("under the limit is not truncated", func(t *testing.T) {
		p := termStart(t, term, CommandSpec{Command: "cat", Args: []string{file}, Cwd: dir, OutputByteLimit: content.Len()})
		termWait(t, p, 10*time.Second)
		out, truncated, _ := p.Output()
		require.False(t, truncated)
		require.Equal(t, content.String(), out)
	})
}

func TestLargeProducerFinishesWithBoundedMemory(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		// 1 GiB takes a few seconds under -race on 2 cores; -short keeps
		// the property with a quarter of the volume.
		size = 256 << 20
	}
	term := newTestTerminal(t, TerminalOptions{})
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	start := time.Now()
	p := termStart(t, term, CommandSpec{Command: "head", Args: []string{"-c", strconv.FormatInt(size, 10), "/dev/zero"}})
	st := termWait(t, p, 60*time.Second)
	elapsed := time.Since(start)
	goruntime.ReadMemStats(&after)
	require.Equal(t, 0, *st.ExitCode)
	out, truncated, _ := p.Output()
	require.True(t, truncated)
	require.Len(t, out, DefaultOutputByteLimit)
	allocated := after.TotalAlloc - before.TotalAlloc
	inuse := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("%d MiB in %v: TotalAlloc +%d KiB, HeapInuse %+d KiB", size>>20, elapsed, allocated>>10, inuse>>10)
	// The retained tail is 1 MiB; the snapshot above copies it twice.
	require.Less(t, allocated, uint64(16<<20), "allocation grew with the output volume")
	require.Less(t, inuse, int64(16<<20))
}

func TestStartRefusesDeniedEnvironment(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	for _, name := range []string{"LD_PRELOAD", "PATH", "GIT_SSH_COMMAND", "BASH_ENV", "A=B"} {
		t.Run(name, func(t *testing.T) {
			_, err := term.Start(context.Background(), CommandSpec{
				Command: "true", Cwd: t.TempDir(), Env: map[string]string{"OK": "1", name: "x"},
			})
			require.ErrorIs(t, err, policy.ErrEnvDenied)
			require.Contains(t, err.Error(), "Environment variable not allowed: "+name)
		})
	}
}

func envLines(t *testing.T, term *LocalTerminal, extra map[string]string) []string {
	t.Helper()
	p := termStart(t, term, CommandSpec{Command: "env", Env: extra})
	termWait(t, p, 5*time.Second)
	out, _, _ := p.Output()
	return strings.Split(strings.TrimSpace(out), "\n")
}

func TestMinimalEnvironmentHasNoSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
	t.Setenv("GITHUB_TOKEN", "ghp-secret")
	t.Setenv("ACP_AGENT_TEST_VISIBLE", "1")
	term := NewLocalTerminal(TerminalOptions{})
	t.Cleanup(func() { require.NoError(t, term.Close()) })
	env := envLines(t, term, map[string]string{"EXTRA": "yes"})
	joined := strings.Join(env, "\n")
	require.NotContains(t, joined, "secret")
	require.NotContains(t, joined, "ACP_AGENT_TEST_VISIBLE", "the agent's environment is not inherited")
	require.Contains(t, env, "PATH="+policy.DefaultPath)
	require.Contains(t, env, "TERM=dumb")
	require.Contains(t, env, "LANG=C.UTF-8")
	require.Contains(t, env, "EXTRA=yes")
}

func TestExplicitEnvironmentIsFilteredAndOverridable(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{Env: []string{
		"PATH=" + termTestPath, "FOO=1", "AWS_SECRET_ACCESS_KEY=s", "NPM_TOKEN=s",
		"DB_PASSWORD=s", "SSH_AUTH_SOCK=/x", "MY_KEY=s", "malformed",
	}})
	env := envLines(t, term, map[string]string{"FOO": "2"})
	require.ElementsMatch(t, append([]string{"PATH=" + termTestPath, "FOO=2"}, GitSafetyEnv(0)...), env)
}

// Every git a command starts refuses planted bare repositories and the
// repository's fsmonitor, also when the inherited environment has
// GIT_CONFIG_* entries of its own (ours come after, so they win).
func TestGitSafetyConfigComesLastInEveryEnvironment(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{Env: []string{
		"PATH=" + termTestPath, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.bareRepository", "GIT_CONFIG_VALUE_0=all",
	}})
	env := envLines(t, term, nil)
	require.ElementsMatch(t, []string{"PATH=" + termTestPath, "GIT_CONFIG_KEY_0=safe.bareRepository", "GIT_CONFIG_VALUE_0=all",
		"GIT_CONFIG_KEY_1=safe.bareRepository", "GIT_CONFIG_VALUE_1=explicit",
		"GIT_CONFIG_KEY_2=core.fsmonitor", "GIT_CONFIG_VALUE_2=false", "GIT_CONFIG_COUNT=3"}, env)
}

func TestStartResolvesCommandsWithTheFixedPathOnly(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	dir := t.TempDir()
	script := filepath.Join(dir, "tool")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho tool ran\n"), 0o755))

	p := termStart(t, term, CommandSpec{Command: "./tool", Cwd: dir})
	termWait(t, p, 5*time.Second)
	out, _, _ := p.Output()
	require.Equal(t, "tool ran\n", out)

	_, err := term.Start(context.Background(), CommandSpec{Command: "tool", Cwd: dir})
	require.ErrorIs(t, err, os.ErrNotExist, "a bare name never resolves in the cwd")

	p = termStart(t, term, CommandSpec{Command: "sh", Args: []string{"-c", `echo "$0"`}, Cwd: dir})
	termWait(t, p, 5*time.Second)
	out, _, _ = p.Output()
	require.Equal(t, "sh\n", out, "argv[0] is the command as written")
}

func TestStartRejectsMalformedSpecs(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	for name, spec := range map[string]CommandSpec{
		"empty command":  {Cwd: "/"},
		"relative cwd":   {Command: "true", Cwd: "rel"},
		"empty cwd":      {Command: "true"},
		"negative limit": {Command: "true", Cwd: "/", OutputByteLimit: -1},
		"negative time":  {Command: "true", Cwd: "/", Timeout: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := term.Start(context.Background(), spec)
			require.ErrorIs(t, err, ErrInvalidCommand)
		})
	}
	_, err := term.Start(context.Background(), CommandSpec{Command: "true", Cwd: "/nonexistent-dir-for-test"})
	require.Error(t, err)
}

func TestOutputSnapshotsAreSafeWhileProducing(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{})
	p := termStart(t, term, CommandSpec{Command: "head", Args: []string{"-c", "8000000", "/dev/urandom"}, OutputByteLimit: 4096})
	for {
		out, _, exit := p.Output()
		require.LessOrEqual(t, len(out), 4096)
		if exit != nil {
			break
		}
	}
	termWait(t, p, 10*time.Second)
}

// The setsid escape: a descendant that calls setsid leaves the process
// group, so the group kill misses it. WaitDelay still bounds Wait while
// it holds the pipe. This test pins the documented behaviour.
func TestSetsidDescendantEscapesGroupKillButWaitIsBounded(t *testing.T) {
	const waitDelay = 300 * time.Millisecond
	term := newTestTerminal(t, TerminalOptions{WaitDelay: waitDelay})
	spec := sh("setsid sleep 100 & echo $!; sleep 100")
	spec.Timeout = 300 * time.Millisecond
	start := time.Now()
	p := termStart(t, term, spec)
	st := termWait(t, p, 5*time.Second)
	require.Less(t, time.Since(start), spec.Timeout+waitDelay+2*time.Second)
	require.True(t, st.TimedOut)
	out, _, _ := p.Output()
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(t, err, "output %q", out)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	requireGroupGone(t, p.Pid(), time.Second)
	require.True(t, processAlive(pid), "without a cgroup the setsid descendant survives (documented)")
}

// cgroupParentForTest returns a cgroup v2 directory this test may create
// children in, or skips.
func cgroupParentForTest(t *testing.T) string {
	t.Helper()
	candidates := []string{os.Getenv("ACP_AGENT_TEST_CGROUP_PARENT"), "/sys/fs/cgroup/unified", "/sys/fs/cgroup"}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(c, "cgroup.procs")); err != nil {
			continue
		}
		probe := filepath.Join(c, fmt.Sprintf("acp-agent-probe-%d", os.Getpid()))
		if err := os.Mkdir(probe, 0o755); err != nil {
			continue
		}
		_, killErr := os.Stat(filepath.Join(probe, "cgroup.kill"))
		_ = os.Remove(probe)
		if killErr == nil {
			return c
		}
	}
	t.Skip("no writable cgroup v2 hierarchy with cgroup.kill")
	return ""
}

func TestCgroupKillsSetsidDescendants(t *testing.T) {
	parent := cgroupParentForTest(t)
	term := newTestTerminal(t, TerminalOptions{CgroupParent: parent, WaitDelay: 300 * time.Millisecond})
	spec := sh("setsid sleep 100 & echo $!; sleep 100")
	spec.Timeout = 300 * time.Millisecond
	start := time.Now()
	p := termStart(t, term, spec)
	st := termWait(t, p, 5*time.Second)
	require.Less(t, time.Since(start), 3*time.Second)
	require.True(t, st.TimedOut)
	out, _, _ := p.Output()
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(t, err, "output %q", out)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	require.Eventually(t, func() bool { return !processAlive(pid) }, 2*time.Second, 10*time.Millisecond,
		"cgroup.kill must reach the setsid descendant")
	requireGroupGone(t, p.Pid(), time.Second)
	dir := p.cgroup.dir
	require.NoError(t, p.Release())
	_, err = os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist, "Release removes the cgroup")
}

func TestStartFailsWhenCgroupCannotBeCreated(t *testing.T) {
	term := newTestTerminal(t, TerminalOptions{CgroupParent: filepath.Join(t.TempDir(), "missing")})
	_, err := term.Start(context.Background(), CommandSpec{Command: "true", Cwd: t.TempDir()})
	require.Error(t, err)
}

// Goal 6.5 in miniature: many timed-out runs, each with background
// children, leave no live member in any of their process groups.
func TestTimeoutLeavesNoGroupMembersAcrossManyRuns(t *testing.T) {
	runs := 200
	if testing.Short() {
		runs = 50
	}
	term := newTestTerminal(t, TerminalOptions{WaitDelay: 200 * time.Millisecond})
	dir := t.TempDir()
	procs := make([]*Process, 0, runs)
	for i := range runs {
		spec := CommandSpec{Command: "sh", Args: []string{"-c", "sleep 100 & sleep 100 & sleep 100"}, Cwd: dir, Timeout: time.Duration(10+i%40) * time.Millisecond}
		p, err := term.Start(context.Background(), spec)
		require.NoError(t, err)
		procs = append(procs, p)
	}
	for _, p := range procs {
		st := termWait(t, p, 5*time.Second)
		require.True(t, st.TimedOut)
	}
	for _, p := range procs {
		requireGroupGone(t, p.Pid(), time.Second)
		require.NoError(t, p.Release())
	}
}
