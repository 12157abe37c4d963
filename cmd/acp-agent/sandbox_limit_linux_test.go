package main

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// Where the sandbox cannot mask by mount (no user namespaces; here the
// fallback's switch), the user is told once, in the first session, that
// nothing new can be created directly in a directory holding .git or a
// .env file; with masks, nothing is said.
func TestBinarySandboxLimitIsToldOnce(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			cmd := exec.Command(agentBin, "--model", "replay/default", "--sandbox", "on")
			asUser(cmd, m)
			home := userDir(t, m)
			p := startAgentCmd(t, cmd, append(slicesClone(m.env), "HOME="+home, "TMPDIR="+modeTmp(t, m), "ACP_AGENT_SESSION_DIR="+userDir(t, m)))
			p.Initialize(noticesCaps)
			var notices []*acp.Notice
			collect := func(msgs []acptest.Message) {
				for _, msg := range msgs {
					if msg.Method == acp.MethodSessionUpdate {
						if n := msg.Update(t).Update.Notice; n != nil {
							notices = append(notices, n)
						}
					}
				}
			}
			resp, msgs := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: userDir(t, m), MCPServers: []acp.McpServer{}})
			acptest.MustResult(t, resp, nil)
			collect(msgs)
			// The setup's notices come with the first session, once the
			// login shell's PATH is known: wait for the limit's, or, where
			// none is due, for the others to have come.
			limitNotices := func() []*acp.Notice {
				var out []*acp.Notice
				for _, n := range notices {
					if n.Title == "Commands are sandboxed with a limit" {
						out = append(out, n)
					}
				}
				return out
			}
			deadline := time.Now().Add(5 * time.Second)
			if m.masks {
				deadline = time.Now().Add(1500 * time.Millisecond)
			}
			for len(limitNotices()) == 0 && time.Now().Before(deadline) {
				if msg, ok := p.NextWithin(100 * time.Millisecond); ok {
					collect([]acptest.Message{msg})
				}
			}
			limit := limitNotices()
			if m.masks {
				assert.Empty(t, limit, "masks by mount have no such limit (mode %s)", m.name)
				return
			}
			require.Len(t, limit, 1, "the fallback's limit is told (mode %s): %v", m.name, notices)
			assert.Equal(t, acp.NoticeSeverityWarning, limit[0].Severity)
			assert.Contains(t, limit[0].Description, "nothing new can be created directly in a directory holding .git or a .env file")
			// Told once per agent.
			resp, msgs = p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: userDir(t, m), MCPServers: []acp.McpServer{}})
			acptest.MustResult(t, resp, nil)
			notices = nil
			collect(msgs)
			if msg, ok := p.NextWithin(300 * time.Millisecond); ok {
				collect([]acptest.Message{msg})
			}
			for _, n := range notices {
				assert.NotEqual(t, "Commands are sandboxed with a limit", n.Title, "told once")
			}
		})
	}
}

// doctor runs one confined command the way sessions do and says what
// holds: masks by mount (privileged for root, a user namespace for
// nobody), or the fallback's limit.
func TestDoctorSaysWhatTheSandboxMasks(t *testing.T) {
	requireSandbox(t)
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			cmd := exec.Command(agentBin, "doctor", "--offline", "--model", "replay/default")
			cmd.Dir = userDir(t, m)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + userDir(t, m)}
			asUser(cmd, m)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
			out := stdout.String()
			switch {
			case m.masks && m.uid < 0 && os.Geteuid() == 0:
				assert.Contains(t, out, "sandbox    ok     available (Landlock ABI")
				assert.Contains(t, out, ".git and .env masked by mount: privileged); checked: a confined command made a file beside .git and .env")
			case m.masks:
				assert.Contains(t, out, ".git and .env masked by mount: user namespace); checked: a confined command made a file beside .git and .env")
			default:
				assert.Contains(t, out, "sandbox    warn   available (Landlock ABI")
				assert.Contains(t, out, "limited: ")
				assert.Contains(t, out, "nothing new can be created directly in a directory holding .git or a .env file")
			}
			assert.Empty(t, stderr.String())
		})
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
