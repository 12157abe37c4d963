package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// smallDisk is a tmpfs of size bytes mounted on dir in a mount namespace
// of its own, held by a process the test owns: agents started in it
// (start) write there, and the test reaches the files through
// /proc/<holder>/root (path). Skips where no namespace can be made.
type smallDisk struct {
	dir    string
	holder *exec.Cmd
}

func newSmallDisk(t *testing.T, size string) *smallDisk {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare(1): no tmpfs of a fixed size")
	}
	dir := filepath.Join(t.TempDir(), "sessions")
	require.NoError(t, os.Mkdir(dir, 0o700))
	args := []string{"--mount", "--propagation", "private"}
	if os.Getuid() != 0 {
		args = append([]string{"--user", "--map-root-user"}, args...)
	}
	holder := exec.Command("unshare", append(args, "sh", "-c", `mount -t tmpfs -o size=`+size+`,mode=0700 none "$1" && echo ready && exec cat`, "sh", dir)...)
	stdin, err := holder.StdinPipe()
	require.NoError(t, err)
	out, err := holder.StdoutPipe()
	require.NoError(t, err)
	holder.Stderr = os.Stderr
	require.NoError(t, holder.Start())
	t.Cleanup(func() { stdin.Close(); _ = holder.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Skipf("no tmpfs in a mount namespace here (%q)", line)
	}
	return &smallDisk{dir: dir, holder: holder}
}

// path is name under the tmpfs as the test sees it.
func (d *smallDisk) path(name string) string {
	return filepath.Join("/proc", strconv.Itoa(d.holder.Process.Pid), "root", d.dir, name)
}

// start runs the agent in the namespace, its session directory on the
// tmpfs.
func (d *smallDisk) start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	nsargs := []string{"-t", strconv.Itoa(d.holder.Process.Pid), "-m"}
	if os.Getuid() != 0 {
		nsargs = append(nsargs, "-U", "--preserve-credentials")
	}
	cmd := exec.Command("nsenter", append(append(nsargs, "--", agentBin, "--session-dir", d.dir), args...)...)
	return startAgentCmd(t, cmd, env)
}

// fill writes a file until the tmpfs is full and returns its name.
func (d *smallDisk) fill(t *testing.T) string {
	t.Helper()
	name := d.path("filler")
	f, err := os.Create(name)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "filling: %v", err)
			return name
		}
	}
}

// A disk that fills up under a session: the prompt whose records cannot
// be stored fails with a clear error, nothing acknowledged before is
// lost, and once there is space again the same process goes on with the
// session (a failed append used to fail every later prompt until the
// session was opened again), writing what it held back first, and a new
// process loads it whole.
func TestBinaryDiskFullFailsThePromptAndLosesNothing(t *testing.T) {
	if _, err := exec.LookPath("nsenter"); err != nil {
		t.Skip("no nsenter(1)")
	}
	disk := newSmallDisk(t, "2m")
	ws := t.TempDir()
	p := disk.start(t, nil, "--model", "replay/default")
	p.Initialize(nil)
	sid := p.NewSession(ws)
	promptText(t, p, sid, "first message")

	filler := disk.fill(t)
	// Larger than the pages the file has room left in.
	second := "second message " + strings.Repeat("x", 64<<10)
	resp, _ := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(second)}})
	require.NotNil(t, resp.Error, "a prompt whose message cannot be stored fails")
	t.Logf("disk full: %d %s %s", resp.Error.Code, resp.Error.Message, resp.Error.Data)
	assert.EqualValues(t, -32603, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "saving the session", "the user is told what failed")
	assert.Contains(t, resp.Error.Message, sid+".jsonl: no space left on device", "and why, naming the session's file")
	assert.NotContains(t, resp.Error.Message, "model ", "the storage's failure is not put on the model")
	assert.NotContains(t, resp.Error.Message, ".tmp", "nor named by a temporary file")

	require.NoError(t, os.Remove(filler))
	promptText(t, p, sid, "third message")

	// A new session whose first save finds the disk full: its prompt
	// fails, nothing of it is recorded, and the next prompt saves it.
	fresh := p.NewSession(ws)
	filler = disk.fill(t)
	resp, _ = p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: fresh, Prompt: []acp.ContentBlock{acp.TextBlock("lost " + strings.Repeat("y", 64<<10))}})
	require.NotNil(t, resp.Error, "a first prompt whose session cannot be saved fails")
	assert.Contains(t, resp.Error.Message, "no space left on device")
	assert.NotContains(t, resp.Error.Message, "model ")
	require.NoError(t, os.Remove(filler))
	promptText(t, p, fresh, "saved at last")
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, waitBudget(t)))

	q := disk.start(t, nil, "--model", "replay/default")
	q.Initialize(nil)
	loadSession(t, q, sid, ws)
	// The second message, which the model answered in that process, was
	// held back and written once there was space: the file is the
	// conversation the session went on with, every message once.
	var got []string
	for _, text := range userTexts(t, q, sid) {
		got = append(got, text[:min(len(text), 20)])
	}
	assert.Equal(t, []string{"first message", second[:20], "third message"}, got, "every message, once, in order")
	loadSession(t, q, fresh, ws)
	assert.Equal(t, []string{"saved at last"}, userTexts(t, q, fresh))
}
