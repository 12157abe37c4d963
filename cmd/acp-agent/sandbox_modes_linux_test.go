package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// The sandbox confines differently for root (it may mount: denied paths
// masked by mount), for another user where user namespaces work (the
// helpers start in one of their own: masked by mount too) and where they
// do not (the fallback: Landlock grants around every denied path, and
// nothing new can be created directly in a directory holding .git or a
// .env). Tests and CI run as root, so the sandbox tests run the agent
// in each mode: as the test's user, and as nobody with and without masks
// by mount (ACP_AGENT_SANDBOX_MOUNTS=off, the fallback's switch).

// sandboxMode is a user, and a setting, to run the agent with.
type sandboxMode struct {
	name string
	// uid and gid the agent runs as; -1: the test's own.
	uid, gid int
	env      []string
	// masks: the denied paths are masked by mount in this mode.
	masks bool
}

// nobodyID is the user the non-root modes run the agent as.
const nobodyID = 65534

// sandboxModes are the modes this machine can run the agent in.
func sandboxModes(t *testing.T) []sandboxMode {
	t.Helper()
	self := sandboxMode{name: "self", uid: -1, gid: -1, masks: sandbox.Probe().Masks != ""}
	if os.Geteuid() == 0 {
		self.name = "root"
	}
	modes := []sandboxMode{self}
	if os.Geteuid() != 0 {
		return append(modes, sandboxMode{name: "self-fallback", uid: -1, gid: -1, env: []string{"ACP_AGENT_SANDBOX_MOUNTS=off"}})
	}
	nobody := sandboxMode{name: "nobody", uid: nobodyID, gid: nobodyID}
	cmd := exec.Command(agentBin, "--version")
	asUser(cmd, nobody)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("the agent cannot run as nobody here (%v: %s): the non-root modes are skipped", err, out)
		return modes
	}
	// Whether nobody gets masks is the machine's to say, not the agent's:
	// can nobody make a user namespace and mount in it?
	nobody.masks = nobodyCanMount(t)
	return append(modes, nobody,
		sandboxMode{name: "nobody-fallback", uid: nobodyID, gid: nobodyID, env: []string{"ACP_AGENT_SANDBOX_MOUNTS=off"}})
}

// nobodyCanMount reports whether nobody can make a user namespace and
// mount a tmpfs in it (unshare(1)); without unshare, what the agent says.
func nobodyCanMount(t *testing.T) bool {
	t.Helper()
	nobody := sandboxMode{uid: nobodyID, gid: nobodyID}
	cmd := exec.Command("unshare", "--user", "--map-root-user", "--mount", "mount", "-t", "tmpfs", "none", "/tmp")
	if _, err := exec.LookPath("unshare"); err != nil {
		cmd = exec.Command(agentBin, "--version")
		asUser(cmd, nobody)
		out, _ := cmd.CombinedOutput()
		return strings.Contains(string(out), "masked by mount")
	}
	asUser(cmd, nobody)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("nobody cannot mount in a user namespace here (%v: %s): masks are not expected as nobody", err, out)
	}
	return err == nil
}

// asUser makes cmd run as m's user.
func asUser(cmd *exec.Cmd, m sandboxMode) {
	if m.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(m.uid), Gid: uint32(m.gid), Groups: []uint32{}}}
	}
	cmd.Env = append(cmd.Env, m.env...)
}

// userDir is a temporary directory that m's user owns.
func userDir(t *testing.T, m sandboxMode) string {
	t.Helper()
	if m.uid < 0 {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "acp-e2e-"+m.name+"-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chown(dir, m.uid, m.gid))
	return dir
}

// chownTree gives dir and everything in it to m's user (what a test
// wrote there as root).
func chownTree(t *testing.T, m sandboxMode, dir string) {
	t.Helper()
	if m.uid < 0 {
		return
	}
	out, err := exec.Command("chown", "-R", "--no-dereference", strconv.Itoa(m.uid)+":"+strconv.Itoa(m.gid), dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
}
