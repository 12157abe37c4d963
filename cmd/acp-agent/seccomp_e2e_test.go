//go:build linux && amd64

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Issue 24 item 1 through the built binary: the attack program
// (runtime/sandbox/testdata/attacks.c, built here with the machine's C
// compiler) runs as the model's confined run_command with the network
// off and the agent itself as the process to trace, read and limit. It
// makes i386 (int $0x80) and x32 system calls from a 64-bit process and
// the native calls the filter refuses; every case must be refused, and
// the host checks its UDP, TCP and Unix listeners, its shared memory
// segment, the agent's limits and that the agent is alive. As root, and
// as nobody (whose helpers hold capabilities in user namespaces of their
// own), with masks by mount and in the fallback.
func TestBinarySandboxSeccompAttacks(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) { seccompAttacks(t, m) })
	}
}

func seccompAttacks(t *testing.T, m sandboxMode) {
	cc := cCompiler(t, "attacks.c")
	dir, home, hostDir := userDir(t, m), userDir(t, m), t.TempDir()
	out, err := exec.Command(cc, "-O1", "-o", filepath.Join(dir, "attacks"), "../../runtime/sandbox/testdata/attacks.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "scratch"), 0o755))
	chownTree(t, m, dir)
	// The host's endpoints are open to every user (directory, sockets,
	// the shared memory segment), so as nobody only the sandbox stands
	// between the attacks and them, not their permissions.
	require.NoError(t, os.Chmod(hostDir, 0o755))

	var got atomic.Int32
	ln, accepted := countingListener(t)
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer udp.Close()
	go func() {
		for {
			if _, _, err := udp.ReadFrom(make([]byte, 64)); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	sock := filepath.Join(hostDir, "docker.sock")
	ul, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer ul.Close()
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			got.Add(1)
			c.Close()
		}
	}()
	require.NoError(t, os.Chmod(sock, 0o777))
	dgram := filepath.Join(hostDir, "log.dgram")
	ud, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: dgram, Net: "unixgram"})
	require.NoError(t, err)
	defer ud.Close()
	require.NoError(t, os.Chmod(dgram, 0o777))
	go func() {
		for {
			if _, _, err := ud.ReadFrom(make([]byte, 64)); err != nil {
				return
			}
			got.Add(1)
		}
	}()
	shmKey := 0x6ac0000 + os.Getpid()%0xffff
	shmID, err := unix.SysvShmGet(shmKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
	require.NoError(t, err)
	defer unix.SysvShmCtl(shmID, unix.IPC_RMID, nil)
	seg, err := unix.SysvShmAttach(shmID, 0, 0)
	require.NoError(t, err)
	copy(seg, "HOST-SHM")
	require.NoError(t, unix.SysvShmDetach(seg))

	model := promptModel(t, map[string][]modelCall{"[go]": {{"run_command", map[string]any{"command": "bash attack.sh", "timeout_seconds": 120}}}})
	conn, sid, agentPid := sandboxSessionAs(t, m, model, dir, home)
	limitsBefore, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", agentPid))
	require.NoError(t, err)
	args := fmt.Sprintf("udp4=%d tcp4=%d unix=%s dgram=%s pid=%d shmkey=%d scratch=%s",
		udp.LocalAddr().(*net.UDPAddr).Port, ln.Addr().(*net.TCPAddr).Port, sock, dgram, agentPid, shmKey, filepath.Join(dir, "scratch"))
	write(t, filepath.Join(dir, "attack.sh"), "./attacks "+args+"\n")
	chownTree(t, m, filepath.Join(dir, "attack.sh"))
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[go]"))

	body := model.body(t, 1)
	require.Contains(t, body, "ATTACKS-DONE", "the program ran to the end: %s", tail(body, 2000))
	results := regexp.MustCompile(`RESULT (\S+) (ESCAPED|blocked)`).FindAllStringSubmatch(body, -1)
	require.GreaterOrEqual(t, len(results), 80)
	for _, r := range results {
		assert.Equal(t, "blocked", r[2], "escape: %s", r[1])
	}
	time.Sleep(100 * time.Millisecond)
	assert.Zero(t, got.Load()+accepted.Load(), "a host endpoint was reached")
	assert.NoError(t, syscall.Kill(agentPid, 0), "the agent is alive")
	limitsAfter, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", agentPid))
	require.NoError(t, err)
	assert.Equal(t, string(limitsBefore), string(limitsAfter), "the agent's limits changed")
	assert.NoFileExists(t, sock+".planted")
	assert.False(t, strings.Contains(body, "HOST-SHM"))
	t.Logf("seccomp attacks through the binary (%s): %d cases, all refused", m.name, len(results))
}
