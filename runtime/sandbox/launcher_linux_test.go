//go:build linux

package sandbox

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func newTestLauncher(t *testing.T) (*Launcher, Policy) {
	t.Helper()
	if st := Probe(); !st.Available {
		t.Skip("no sandbox on this kernel:", st.Reason)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	l := NewLauncher(exe)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	return l, Policy{WritableRoots: []string{t.TempDir()}, TempDir: t.TempDir()}
}

// run starts script under sh in the launcher and returns its output and
// wait status.
func run(t *testing.T, l *Launcher, pol Policy, script string) (string, syscall.WaitStatus, error) {
	t.Helper()
	p, out := start(t, l, pol, script)
	ws, err := p.Wait()
	return string(<-out), ws, err
}

func start(t *testing.T, l *Launcher, pol Policy, script string) (*Proc, <-chan []byte) {
	t.Helper()
	devNull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer devNull.Close()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	req := Request{Policy: pol, Path: "/bin/sh", Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: pol.WritableRoots[0]}
	p, err := l.Start(req, []*os.File{devNull, pw, pw})
	pw.Close()
	if err != nil {
		pr.Close()
		require.NoError(t, err)
	}
	out := make(chan []byte, 1)
	go func() {
		defer pr.Close()
		b, _ := io.ReadAll(pr)
		out <- b
	}()
	return p, out
}

// parentOf reads a process's parent pid from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, err := strconv.Atoi(f[1])
	require.NoError(t, err)
	return ppid
}

// Paying the helper's start-up once is the point of the launcher: one
// helper serves commands that run one after another.
func TestSequentialCommandsShareOneHelper(t *testing.T) {
	l, pol := newTestLauncher(t)
	parents := map[string]bool{}
	for i := range 4 {
		out, ws, err := run(t, l, pol, "echo $PPID; exit "+strconv.Itoa(i))
		require.NoError(t, err)
		assert.Equal(t, i, ws.ExitStatus())
		parents[strings.TrimSpace(out)] = true
	}
	assert.Len(t, parents, 1, "every command ran under the same helper")
	assert.NotContains(t, parents, strconv.Itoa(os.Getpid()), "the agent is not the command's parent")
}

// Commands that run at the same time each get a helper: a helper's
// children are all one command's, which is what lets it kill what that
// command left behind.
func TestConcurrentCommandsGetHelpersOfTheirOwn(t *testing.T) {
	l, pol := newTestLauncher(t)
	const n = 3
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, _, err := run(t, l, pol, "sleep 0.3; echo $PPID")
			assert.NoError(t, err)
			outs[i] = strings.TrimSpace(out)
		}()
	}
	wg.Wait()
	assert.NotEqual(t, outs[0], outs[1])
	assert.NotEqual(t, outs[1], outs[2])
	assert.NotEqual(t, outs[0], outs[2])
}

// Each command gets its own policy, even from a helper that ran a more
// permissive one before.
func TestEachCommandIsConfinedByItsOwnPolicy(t *testing.T) {
	l, pol := newTestLauncher(t)
	other := t.TempDir()
	wide := pol
	wide.ExtraWritable = []string{other}
	_, ws, err := run(t, l, wide, "echo x > "+filepath.Join(other, "a"))
	require.NoError(t, err)
	require.Equal(t, 0, ws.ExitStatus(), "the wider policy lets it write there")
	_, ws, err = run(t, l, pol, "echo x > "+filepath.Join(other, "b"))
	require.NoError(t, err)
	assert.NotEqual(t, 0, ws.ExitStatus())
	assert.NoFileExists(t, filepath.Join(other, "b"), "the next command kept the first one's grant")
	_, ws, err = run(t, l, pol, "echo x > "+filepath.Join(pol.WritableRoots[0], "c"))
	require.NoError(t, err)
	assert.Equal(t, 0, ws.ExitStatus())
}

// Nothing a command starts outlives it, setsid included, and the helper
// is ready for the next one.
func TestWhatACommandLeavesBehindIsKilled(t *testing.T) {
	l, pol := newTestLauncher(t)
	out, _, err := run(t, l, pol, "setsid sleep 60 >/dev/null 2>&1 & echo $!")
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(t, err)
	assert.ErrorIs(t, unix.Kill(pid, 0), unix.ESRCH, "the setsid grandchild survived")
	_, ws, err := run(t, l, pol, "exit 3")
	require.NoError(t, err)
	assert.Equal(t, 3, ws.ExitStatus())
}

// The helper's socket and other descriptors never reach a command.
func TestTheHelperSocketNeverReachesTheCommand(t *testing.T) {
	l, pol := newTestLauncher(t)
	out, _, err := run(t, l, pol, "ls -l /proc/self/fd/")
	require.NoError(t, err)
	assert.NotContains(t, out, "socket:", "a socket reached the command:\n%s", out)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		_, link, ok := strings.Cut(line, " -> ")
		if !ok {
			continue // "total 0"
		}
		f := strings.Fields(line)
		fd := f[len(f)-3]
		if strings.HasPrefix(link, "/proc/") {
			continue // ls reading the directory
		}
		assert.Contains(t, []string{"0", "1", "2"}, fd, "descriptor %q reached the command", line)
	}
}

// A signal reaches the running command's process group.
func TestSignalReachesTheCommand(t *testing.T) {
	l, pol := newTestLauncher(t)
	p, out := start(t, l, pol, "sleep 60")
	require.NoError(t, p.Signal(syscall.SIGTERM))
	ws, err := p.Wait()
	<-out
	require.NoError(t, err)
	assert.True(t, ws.Signaled())
	assert.Equal(t, syscall.SIGTERM, ws.Signal())
	assert.NoError(t, p.Signal(syscall.SIGKILL), "a signal after the end is a no-op")
}

// Close ends running commands with their helpers.
func TestCloseEndsARunningCommand(t *testing.T) {
	l, pol := newTestLauncher(t)
	p, out := start(t, l, pol, "sleep 60")
	begin := time.Now()
	require.NoError(t, l.Close())
	_, _ = p.Wait()
	<-out
	assert.Less(t, time.Since(begin), 10*time.Second)
	assert.ErrorIs(t, unix.Kill(p.Pid(), 0), unix.ESRCH)
	_, err := l.Start(Request{Path: "/bin/true", Argv: []string{"true"}, Dir: "/"}, []*os.File{os.Stdin, os.Stdout, os.Stderr})
	assert.ErrorIs(t, err, ErrClosed)
}

// A helper that dies (killed from outside) takes its command along, the
// command's Wait says so, and the next command gets a new helper.
func TestAKilledHelperFailsItsCommandAndIsReplaced(t *testing.T) {
	l, pol := newTestLauncher(t)
	// exec: a sleep forked by sh (dash forks) would not get the
	// command's Pdeathsig and would hold the output pipe for 60 s.
	p, out := start(t, l, pol, "exec sleep 60")
	helper := parentOf(t, p.Pid())
	require.NoError(t, unix.Kill(helper, unix.SIGKILL))
	_, err := p.Wait()
	<-out
	assert.True(t, errors.Is(err, errHelperDied), "%v", err)
	o, ws, err := run(t, l, pol, "echo $PPID")
	require.NoError(t, err)
	assert.Equal(t, 0, ws.ExitStatus())
	assert.NotEqual(t, strconv.Itoa(helper), strings.TrimSpace(o))
	// An idle helper killed from outside is replaced on the next start.
	next, _ := strconv.Atoi(strings.TrimSpace(o))
	require.NoError(t, unix.Kill(next, unix.SIGKILL))
	for unix.Kill(next, 0) == nil {
		time.Sleep(time.Millisecond)
	}
	_, ws, err = run(t, l, pol, "exit 4")
	require.NoError(t, err)
	assert.Equal(t, 4, ws.ExitStatus())
}

// A command the helper cannot start comes back as Start's error, and the
// helper serves the next one.
func TestAProgramThatCannotStartIsAnErrorAndTheHelperStaysUsable(t *testing.T) {
	l, pol := newTestLauncher(t)
	devNull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer devNull.Close()
	_, err = l.Start(Request{Policy: pol, Path: "/nonexistent/prog", Argv: []string{"prog"}, Dir: pol.WritableRoots[0]}, []*os.File{devNull, devNull, devNull})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/prog")
	_, ws, err := run(t, l, pol, "exit 5")
	require.NoError(t, err)
	assert.Equal(t, 5, ws.ExitStatus())
}

// Garbage on the helper's socket ends the helper with an error instead of
// running anything.
func TestAMalformedFrameEndsTheHelper(t *testing.T) {
	if st := Probe(); !st.Available {
		t.Skip("no sandbox on this kernel:", st.Reason)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	for name, frame := range map[string][]byte{
		"oversized length": {0xff, 0xff, 0xff, 0xff},
		"not JSON":         append([]byte{0, 0, 0, 3}, "{x}"...),
	} {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		theirs := os.NewFile(uintptr(fds[1]), "helper")
		p, err := os.StartProcess(exe, []string{exe, HelperArg}, &os.ProcAttr{Files: []*os.File{nil, nil, nil, theirs}})
		theirs.Close()
		require.NoError(t, err)
		_, err = unix.Write(fds[0], frame)
		require.NoError(t, err)
		st, err := p.Wait()
		unix.Close(fds[0])
		require.NoError(t, err)
		assert.Equal(t, 2, st.ExitCode(), name)
	}
}

// Issue 24 item 7: the project's secrets files (.env, .env.* at any depth,
// templates excepted) are unreadable for a confined command however it
// names them, also one created after the helper first looked and one the
// workspace links to; a secret denied by path stays unreadable when the
// workspace root holds it (a workspace that is the home directory).
func TestSecretsFilesUnderTheRootsAreUnreadable(t *testing.T) {
	forEachMode(t, testSecretsFilesUnderTheRootsAreUnreadable)
}

func testSecretsFilesUnderTheRootsAreUnreadable(t *testing.T, m mode) {
	l, pol := newTestLauncher(t)
	ws, outside := pol.WritableRoots[0], t.TempDir()
	files := map[string]string{
		".env": "ROOT_ENV_SECRET", "app/.env.local": "LOCAL_ENV_SECRET", "deep/a/b/.env.production": "DEEP_ENV_SECRET",
		".ENV.Staging": "CASE_ENV_SECRET", ".env.example": "TEMPLATE_OK", "py/.env/bin/activate": "VENV_OK",
		"app/config.txt": "SIBLING_OK",
	}
	for p, c := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, p), []byte(c+"\n"), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(outside, "prod.secrets"), []byte("LINKED_ENV_SECRET\n"), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(outside, "prod.secrets"), filepath.Join(ws, "app", ".env.prod")))

	script := `for f in .env app/.env.local deep/a/b/.env.production .ENV.Staging app/.env.prod \
	  ./app/../.env "$PWD/deep/a/b/.env.production" /proc/self/cwd/.env; do cat "$f"; done
	cp .env stolen; cd deep/a && cat b/.env.production; cd "$OLDPWD"
	ln .env hard 2>/dev/null && cat hard
	cat .env.example py/.env/bin/activate app/config.txt
	echo more >> app/config.txt && echo WRITE_OK
	ls -a | grep -q '^app$' && echo LISTED_OK`
	out, _, err := run(t, l, pol, script)
	require.NoError(t, err)
	for _, c := range files {
		if strings.HasSuffix(c, "_SECRET") {
			assert.NotContains(t, out, c)
		}
	}
	assert.NotContains(t, out, "LINKED_ENV_SECRET")
	for _, c := range []string{"TEMPLATE_OK", "VENV_OK", "SIBLING_OK", "WRITE_OK", "LISTED_OK"} {
		assert.Contains(t, out, c, "what is not a secret stays usable")
	}

	// A secrets file that appears after the helper looked.
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "late"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "late", ".env"), []byte("LATE_ENV_SECRET\n"), 0o600))
	out, _, err = run(t, l, pol, "cat late/.env; cat app/.env.local")
	require.NoError(t, err)
	assert.NotContains(t, out, "LATE_ENV_SECRET")
	assert.NotContains(t, out, "LOCAL_ENV_SECRET")

	// A workspace that holds a denied directory (the home directory as
	// the workspace, with .ssh, and a denied file deeper down): the
	// root's write grant does not cover them. With masks, the home
	// directory itself stays writable, and the directory between it and
	// the deeper secret cannot be renamed away for the next command.
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("HOME_SSH_SECRET\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config", "gh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".config", "gh", "hosts.yml"), []byte("HOME_GH_SECRET\n"), 0o600))
	homePol := Policy{WritableRoots: []string{home}, TempDir: pol.TempDir,
		DeniedPaths: []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".config", "gh", "hosts.yml")}}
	out, _, err = run(t, l, homePol, "cat .ssh/id_rsa; ls .ssh; cp -r .ssh copy; cat copy/id_rsa; cat .config/gh/hosts.yml; "+
		"mv .config moved; mv .ssh ssh2; touch made-in-home && echo HOME-WRITABLE; echo DONE")
	require.NoError(t, err)
	assert.Contains(t, out, "DONE")
	assert.NotContains(t, out, "HOME_SSH_SECRET")
	assert.NotContains(t, out, "HOME_GH_SECRET")
	assert.NotContains(t, out, "id_rsa\n")
	if m.masks {
		assert.Contains(t, out, "HOME-WRITABLE", "with masks, a workspace holding a denied path stays writable")
	}
	out, _, err = run(t, l, homePol, "cat moved/gh/hosts.yml ssh2/id_rsa .config/gh/hosts.yml .ssh/id_rsa; echo DONE")
	require.NoError(t, err)
	assert.Contains(t, out, "DONE")
	assert.NotContains(t, out, "HOME_SSH_SECRET")
	assert.NotContains(t, out, "HOME_GH_SECRET", "a denied file's directory was renamed away for the next command")
}

// Issue 24: with the network off, no standard descriptor may be a socket
// that can address something (a datagram socket takes an address in
// sendmsg, which the filter allows for connected pairs); a connected
// stream pair is fine.
func TestStdioThatCouldAddressAnEndpointIsRefused(t *testing.T) {
	l, pol := newTestLauncher(t)
	for name, typ := range map[string]int{"datagram": unix.SOCK_DGRAM, "unconnected stream": -1} {
		var fd int
		if typ == -1 {
			s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			require.NoError(t, err)
			fd = s
		} else {
			pair, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
			require.NoError(t, err)
			defer unix.Close(pair[1])
			fd = pair[0]
		}
		f := os.NewFile(uintptr(fd), name)
		_, err := l.Start(Request{Policy: pol, Path: "/bin/true", Argv: []string{"true"}, Dir: pol.WritableRoots[0]}, []*os.File{f, f, f})
		f.Close()
		assert.Error(t, err, name)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	a, b := os.NewFile(uintptr(pair[0]), "a"), os.NewFile(uintptr(pair[1]), "b")
	defer b.Close()
	p, err := l.Start(Request{Policy: pol, Path: "/bin/true", Argv: []string{"true"}, Dir: pol.WritableRoots[0]}, []*os.File{a, a, a})
	a.Close()
	require.NoError(t, err, "a connected stream pair is fine")
	_, err = p.Wait()
	require.NoError(t, err)
	// With the network on, endpoints are the command's to use.
	pol.Network = true
	d, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	df := os.NewFile(uintptr(d[0]), "d")
	defer unix.Close(d[1])
	p, err = l.Start(Request{Policy: pol, Path: "/bin/true", Argv: []string{"true"}, Dir: pol.WritableRoots[0]}, []*os.File{df, df, df})
	df.Close()
	require.NoError(t, err)
	_, err = p.Wait()
	require.NoError(t, err)
}
