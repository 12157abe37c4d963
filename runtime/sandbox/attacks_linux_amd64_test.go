//go:build linux && amd64

package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// BuildAttacks compiles testdata/attacks.c (i386, x32 and native attacks
// on the seccomp filter) with the machine's C compiler into dir, or skips
// the test saying why it cannot.
func buildAttacks(t *testing.T, dir string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		if cc, err = exec.LookPath("gcc"); err != nil {
			t.Skip("no C compiler (cc or gcc) to build testdata/attacks.c: install gcc to run the seccomp attacks")
		}
	}
	bin := filepath.Join(dir, "attacks")
	out, err := exec.Command(cc, "-O1", "-o", bin, "testdata/attacks.c").CombinedOutput()
	require.NoError(t, err, "building attacks.c: %s", out)
	return bin
}

// hostEndpoints are what a confined command must not reach with the
// network off, each counting what arrives.
type hostEndpoints struct {
	udp4, udp6, tcp4  int
	unixPath, dgram   string
	shmKey            int
	target            int // a process outside the sandbox
	got               atomic.Int32
	pty, ptySlave     *os.File
	shmID             int
	closers           []func()
	udp6Unavailable   bool
	targetLimitsStart string
}

func newHostEndpoints(t *testing.T) *hostEndpoints {
	t.Helper()
	h := &hostEndpoints{}
	t.Cleanup(func() {
		for _, c := range h.closers {
			c()
		}
	})
	count := func(read func() error) {
		go func() {
			for read() == nil {
				h.got.Add(1)
			}
		}()
	}
	u4, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	h.closers = append(h.closers, func() { u4.Close() })
	h.udp4 = u4.LocalAddr().(*net.UDPAddr).Port
	count(func() error { _, _, err := u4.ReadFrom(make([]byte, 64)); return err })
	if u6, err := net.ListenPacket("udp6", "[::1]:0"); err == nil {
		h.closers = append(h.closers, func() { u6.Close() })
		h.udp6 = u6.LocalAddr().(*net.UDPAddr).Port
		count(func() error { _, _, err := u6.ReadFrom(make([]byte, 64)); return err })
	} else {
		h.udp6Unavailable = true
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	h.closers = append(h.closers, func() { ln.Close() })
	h.tcp4 = ln.Addr().(*net.TCPAddr).Port
	count(func() error {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		return err
	})
	// Unix sockets in a directory of the host's: think docker.sock.
	sockDir, err := os.MkdirTemp("", "acp-host-sock-")
	require.NoError(t, err)
	h.closers = append(h.closers, func() { os.RemoveAll(sockDir) })
	h.unixPath = filepath.Join(sockDir, "host.sock")
	ul, err := net.Listen("unix", h.unixPath)
	require.NoError(t, err)
	h.closers = append(h.closers, func() { ul.Close() })
	count(func() error {
		c, err := ul.Accept()
		if err == nil {
			c.Close()
		}
		return err
	})
	h.dgram = filepath.Join(sockDir, "host.dgram")
	ud, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: h.dgram, Net: "unixgram"})
	require.NoError(t, err)
	h.closers = append(h.closers, func() { ud.Close() })
	count(func() error { _, _, err := ud.ReadFrom(make([]byte, 64)); return err })
	// A SysV segment of the host's, by key.
	h.shmKey = 0x5ac0000 + os.Getpid()%0xffff
	h.shmID, err = unix.SysvShmGet(h.shmKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	require.NoError(t, err)
	h.closers = append(h.closers, func() { _, _ = unix.SysvShmCtl(h.shmID, unix.IPC_RMID, nil) })
	seg, err := unix.SysvShmAttach(h.shmID, 0, 0)
	require.NoError(t, err)
	copy(seg, "HOST-SHM")
	require.NoError(t, unix.SysvShmDetach(seg))
	// A process outside the sandbox to trace, read and limit.
	sleeper := exec.Command("sleep", "60")
	require.NoError(t, sleeper.Start())
	h.closers = append(h.closers, func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	h.target = sleeper.Process.Pid
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", h.target))
	require.NoError(t, err)
	h.targetLimitsStart = string(limits)
	// A terminal for stdin, to type into.
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	h.closers = append(h.closers, func() { master.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	h.closers = append(h.closers, func() { slave.Close() })
	h.pty, h.ptySlave = master, slave
	return h
}

func (h *hostEndpoints) args(scratch string) []string {
	return []string{
		"udp4=" + strconv.Itoa(h.udp4), "udp6=" + strconv.Itoa(h.udp6), "tcp4=" + strconv.Itoa(h.tcp4),
		"unix=" + h.unixPath, "dgram=" + h.dgram, "pid=" + strconv.Itoa(h.target),
		"shmkey=" + strconv.Itoa(h.shmKey), "scratch=" + scratch,
	}
}

// typed reports what reached the terminal's other end (an injected
// keystroke echoes there).
func (h *hostEndpoints) typed(t *testing.T) string {
	t.Helper()
	fd := int(h.pty.Fd())
	require.NoError(t, unix.SetNonblock(fd, true))
	var buf bytes.Buffer
	b := make([]byte, 256)
	for {
		n, err := unix.Read(fd, b)
		if n <= 0 || err != nil {
			break
		}
		buf.Write(b[:n])
	}
	return buf.String()
}

var resultLine = regexp.MustCompile(`(?m)^RESULT (\S+) (ESCAPED|blocked)(.*)$`)

// runAttacks runs the attack program confined by pol, with the terminal
// as stdin, and returns each case's outcome.
func runAttacks(t *testing.T, l *Launcher, pol Policy, bin string, h *hostEndpoints, extra ...string) map[string]string {
	t.Helper()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	argv := append(append([]string{"attacks"}, h.args(filepath.Join(pol.WritableRoots[0], "scratch"))...), extra...)
	req := Request{Policy: pol, Path: bin, Argv: argv, Env: []string{"PATH=/usr/bin:/bin"}, Dir: pol.WritableRoots[0]}
	p, err := l.Start(req, []*os.File{h.ptySlave, pw, pw})
	pw.Close()
	if err != nil {
		pr.Close()
		require.NoError(t, err)
	}
	out, _ := io.ReadAll(pr)
	pr.Close()
	ws, err := p.Wait()
	require.NoError(t, err)
	require.Equal(t, 0, ws.ExitStatus(), "the attack program failed: %s", out)
	require.Contains(t, string(out), "ATTACKS-DONE", "%s", out)
	res := map[string]string{}
	for _, m := range resultLine.FindAllStringSubmatch(string(out), -1) {
		res[m[1]] = m[2] + m[3]
	}
	return res
}

// Issue 24 item 1: the filter is built for one architecture, and a 64-bit
// program can make i386 system calls (int $0x80) and x32 ones: every
// attack through them, and through the native calls the filter reviews
// as endpoints or ways into other processes, is refused with the network
// off. The host checks its listeners, the terminal, the shared memory and
// the target process itself.
func TestSeccompAttacksAreRefused(t *testing.T) {
	l, pol := newTestLauncher(t)
	bin := buildAttacks(t, t.TempDir())
	require.NoError(t, os.Mkdir(filepath.Join(pol.WritableRoots[0], "scratch"), 0o755))
	h := newHostEndpoints(t)

	// The control: unconfined, the 32-bit interface works here and the
	// program reaches the host (only harmless cases run unconfined).
	control, err := exec.Command(bin, append(h.args(""), "only=i386-udp4")...).CombinedOutput()
	require.NoError(t, err, "%s", control)
	if !strings.Contains(string(control), "RESULT i386-udp4-socket ESCAPED") {
		t.Skipf("this kernel runs no i386 system calls (no IA32 emulation): %s", control)
	}
	require.Eventually(t, func() bool { return h.got.Load() >= 2 }, 5*time.Second, 10*time.Millisecond, "the unconfined control reached nothing")
	h.got.Store(0)

	res := runAttacks(t, l, pol, bin, h)
	require.GreaterOrEqual(t, len(res), 80, "every case reported: %v", res)
	for name, outcome := range res {
		assert.True(t, strings.HasPrefix(outcome, "blocked"), "escape: %s (%s)", name, outcome)
	}
	for _, name := range []string{"i386-udp4-socketcall", "i386-getpid", "x32-udp4"} {
		assert.Contains(t, res[name], "signal-31", "%s: a foreign system call ABI is killed outright (SIGSYS)", name)
	}
	time.Sleep(100 * time.Millisecond)
	assert.Zero(t, h.got.Load(), "a host endpoint was reached")
	assert.Empty(t, h.typed(t), "keystrokes were typed into the terminal")
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", h.target))
	require.NoError(t, err)
	assert.Equal(t, h.targetLimitsStart, string(limits), "the target's limits changed")
	assert.NoFileExists(t, h.unixPath+".planted")
	t.Logf("seccomp attacks: %d cases, all refused", len(res))

	// With the network on, the other ABIs are still refused outright.
	pol.Network = true
	res = runAttacks(t, l, pol, bin, h, "only=i386")
	require.NotEmpty(t, res)
	for name, outcome := range res {
		assert.Contains(t, outcome, "signal-31", "%s with the network on", name)
	}
	time.Sleep(100 * time.Millisecond)
	assert.Zero(t, h.got.Load(), "a host endpoint was reached through i386 with the network on")
}
