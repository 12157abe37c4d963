package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// acpxCLI returns node and acpx's cli.js (.ci/acpx, installed by
// .ci/run), or skips the test.
func acpxCLI(t *testing.T) (node, cli string) {
	t.Helper()
	if goruntime.GOOS != "linux" {
		t.Skip("the acpx tests end acpx's background queue owner through /proc")
	}
	cli, err := filepath.Abs(filepath.Join("..", "..", ".ci", "acpx", "node_modules", "acpx", "dist", "cli.js"))
	require.NoError(t, err)
	if _, err := os.Stat(cli); err != nil {
		t.Skipf("acpx is not installed (%v); run `npm install --prefix .ci/acpx` in the repository root", err)
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Skipf("acpx is installed but node is not on PATH: %v", err)
	}
	return node, cli
}

// acpxRun is one acpx invocation: a new process, as a user's shell runs
// it, with the agent as acpx's raw agent command.
type acpxRun struct {
	node, cli, home, cwd, agent string
}

func (r acpxRun) run(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// --ttl 1: the queue owner acpx leaves behind (with the agent) ends a
	// second after its last prompt.
	cmd := exec.CommandContext(ctx, r.node, append([]string{r.cli, "--format", "json", "--ttl", "1", "--cwd", r.cwd,
		"--agent", r.agent}, args...)...)
	cmd.Dir = r.cwd
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + r.home,
		"ACP_AGENT_SESSION_DIR=" + filepath.Join(r.home, "sessions")}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "acpx %v\nstdout: %s\nstderr: %s", args, out.String(), errOut.String())
	return out.String(), errOut.String()
}

// endProcessesOf kills what acpx left running with HOME=home (its queue
// owner and the agent under it), found through /proc by their
// environment, and waits for them to go.
func endProcessesOf(t *testing.T, home string) {
	t.Helper()
	mark := []byte("HOME=" + home + "\x00")
	find := func() []int {
		ents, _ := os.ReadDir("/proc")
		var pids []int
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err == nil && bytes.Contains(env, mark) {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	deadline := time.Now().Add(10 * time.Second)
	for pids := find(); len(pids) > 0; pids = find() {
		if time.Now().After(deadline) {
			t.Errorf("processes of acpx still running: %v", pids)
			return
		}
		for _, pid := range pids {
			killPID(pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// wireLine is a JSON-RPC message as acpx's --format json prints it.
type wireLine struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Issue 30 review, with acpx 0.19.1 (a real client nobody here wrote):
// `acpx sessions new` (a process that runs initialize and session/new and
// exits) then `acpx prompt` (a new process, which resumes that session)
// land in the same session: the resume of the session never prompted
// succeeds, no new session is made in its place, and the prompt saves it
// under that id. It used to be "not found", and acpx silently started
// another session, losing the user's.
func TestAcpxSessionsNewThenPromptStaysInTheSession(t *testing.T) {
	node, cli := acpxCLI(t)
	home, cwd := t.TempDir(), t.TempDir()
	cwd, _ = filepath.EvalSymlinks(cwd)
	t.Cleanup(func() {
		endProcessesOf(t, home)
		// acpx's queue owner keeps its socket in /tmp/acpx-<hash of
		// HOME>, not under HOME, and a killed owner leaves it there.
		sum := sha256.Sum256([]byte(home))
		os.RemoveAll(filepath.Join("/tmp", "acpx-"+hex.EncodeToString(sum[:])[:10]))
	})
	r := acpxRun{node: node, cli: cli, home: home, cwd: cwd, agent: agentBin + " --model replay/default"}

	out, errOut := r.run(t, "sessions", "new")
	var created struct {
		SessionID string `json:"acpxSessionId"`
	}
	for line := range strings.Lines(out) {
		if strings.Contains(line, `"session_ensured"`) {
			require.NoError(t, json.Unmarshal([]byte(line), &created))
		}
	}
	require.NotEmpty(t, created.SessionID, "stdout: %s\nstderr: %s", out, errOut)
	sessions := filepath.Join(home, "sessions")
	assert.NoFileExists(t, filepath.Join(sessions, created.SessionID+".jsonl"), "not saved before its first prompt")
	assert.FileExists(t, filepath.Join(sessions, ".reserved", created.SessionID))

	out, errOut = r.run(t, "prompt", "hi")
	var opened, prompted, made []string
	resumeIDs := map[int]bool{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m wireLine
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		switch m.Method {
		case "session/resume", "session/load":
			opened = append(opened, m.Method+" "+p.SessionID)
			resumeIDs[*m.ID] = true
		case "session/new":
			made = append(made, m.Method)
		case "session/prompt":
			prompted = append(prompted, p.SessionID)
		case "":
			if m.ID != nil && resumeIDs[*m.ID] {
				assert.Nil(t, m.Error, "the resume answers without an error")
			}
		}
	}
	// acpx prints a resume that failed as nothing: then only the new
	// session it made instead shows.
	if assert.NotEmpty(t, opened, "acpx reopens its session\nstdout: %s\nstderr: %s", out, errOut) {
		assert.Contains(t, opened[0], created.SessionID)
	}
	assert.Empty(t, made, "no new session in place of the user's")
	assert.Equal(t, []string{created.SessionID}, prompted, "the prompt goes to the session acpx created")
	assert.FileExists(t, filepath.Join(sessions, created.SessionID+".jsonl"), "saved at its first prompt, under its id")
}
