package main

import (
	"bufio"
	"encoding/json"
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

	// The file holds the second message, written once there was space.
	assert.Equal(t, []string{"first message", second[:20], "third message"}, fileUserTexts(t, disk.path(sid+".jsonl")),
		"every message, once, in order")

	// A compaction whose rewrite finds the disk full: the session goes
	// on, and the compacted file is written once there is space.
	filler = disk.fill(t)
	said := textOf(t, promptText(t, p, sid, "/compact"))
	assert.Contains(t, said, "/compact: saving the session", "a compaction that could not be saved says so")
	assert.Contains(t, said, "no space left on device")
	assert.NotContains(t, said, "Compacted")
	require.NoError(t, os.Remove(filler))
	promptText(t, p, sid, "after the compaction")
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, waitBudget(t)))

	q := disk.start(t, nil, "--model", "replay/default")
	q.Initialize(nil)
	loadSession(t, q, sid, ws)
	users := userTexts(t, q, sid)
	require.GreaterOrEqual(t, len(users), 2)
	assert.Equal(t, []string{"third message", "after the compaction"}, users[len(users)-2:], "the compacted session, its last messages once")
	assert.NotContains(t, users[:len(users)-2], "third message")
	loadSession(t, q, fresh, ws)
	assert.Equal(t, []string{"saved at last"}, userTexts(t, q, fresh))
}

// fileUserTexts are the first 20 bytes of the texts of the user messages
// in the session file at path.
func fileUserTexts(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")[1:] {
		var r struct {
			Type    string `json:"type"`
			Kind    string `json:"kind"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &r), "line %q", line[:min(len(line), 80)])
		if r.Type == "entry" && r.Kind == "user" && len(r.Content) > 0 {
			out = append(out, r.Content[0].Text[:min(len(r.Content[0].Text), 20)])
		}
	}
	return out
}
