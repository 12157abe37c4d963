package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// gatedReader passes reads through while open; hold makes later reads
// wait until release: a client that stops reading its agent's output.
type gatedReader struct {
	r    io.Reader
	mu   sync.Mutex
	open chan struct{}
}

func newGatedReader(r io.Reader) *gatedReader {
	g := &gatedReader{r: r, open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gatedReader) Read(p []byte) (int, error) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	<-open
	return g.r.Read(p)
}

func (g *gatedReader) hold() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedReader) release() {
	g.mu.Lock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
	g.mu.Unlock()
}

// TestBinarySlowClientGetsTheAnswerMergedWholeAndInOrder: a client that
// stops reading while the model streams gets the chunks that waited for
// it merged into fewer agent_message_chunk notifications, with the whole
// text in order and the tool call between the two answers where it was;
// nothing is lost when it reads again.
func TestBinarySlowClientGetsTheAnswerMergedWholeAndInOrder(t *testing.T) {
	const n = 300
	ws := t.TempDir()
	marker := filepath.Join(ws, "marker.txt")
	// A first chunk larger than the pipe and the client's read blocks the
	// agent's writer while the rest of the answer streams behind it.
	big := strings.Repeat("x", 300<<10)
	first := []any{map[string]any{"text": big}}
	var wantA, wantB strings.Builder
	for i := range n {
		s := "a" + strconv.Itoa(i) + " "
		first = append(first, map[string]any{"text": s})
		wantA.WriteString(s)
	}
	first = append(first, map[string]any{"toolCall": map[string]any{"id": "w1", "name": "write_file",
		"arguments": map[string]any{"path": "marker.txt", "content": "here\n"}}})
	var second []any
	for i := range n {
		s := "b" + strconv.Itoa(i) + " "
		second = append(second, map[string]any{"text": s})
		wantB.WriteString(s)
	}
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"events": first}, map[string]any{"events": second}}})

	cmd := exec.Command(agentBin, "--model", "replay/"+script, "--mode", "full-access", "--sandbox", "off", "--log-level", "warn")
	cmd.Env = agentEnv(t)
	stderr := &syncWriter{}
	cmd, stdin, stdout := startPiped(t, cmd, stderr)
	gate := newGatedReader(stdout)
	c := acptest.New(t, stdin, gate)
	c.Timeout = waitBudget(t)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		gate.release()
		stdin.Close()
		select {
		case err := <-exited:
			assert.NoError(t, err)
		case <-time.After(waitBudget(t)):
			_ = cmd.Process.Kill()
			<-exited
			t.Error("the agent did not exit after stdin EOF")
		}
		if t.Failed() {
			t.Logf("agent stderr:\n%s", stderr.String())
		}
	})

	c.Initialize(nil)
	resp, _ := c.Call(acp.MethodSessionNew, map[string]any{"cwd": ws, "mcpServers": []any{}})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	gate.hold()
	id := c.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: ns.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("go")}})
	// The tool runs once the first answer has streamed (into the
	// session's queue: the client reads nothing meanwhile).
	require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, waitBudget(t), 10*time.Millisecond)
	gate.release()
	resp, before := c.Await(id)
	acptest.MustResult(t, resp, nil)

	var a, b strings.Builder
	aChunks, bChunks, toolCalls := 0, 0, 0
	var firstID, secondID string
	for _, m := range before {
		if m.Method != acp.MethodSessionUpdate {
			continue
		}
		u := m.Update(t).Update
		switch {
		case u.ToolCall != nil:
			toolCalls++
			assert.Equal(t, big+wantA.String(), a.String(), "the tool call comes after the whole first answer")
			assert.Zero(t, b.Len(), "and before the second")
		case u.AgentMessageChunk != nil:
			text := u.AgentMessageChunk.Content.Text.Text
			if toolCalls == 0 {
				if firstID == "" {
					firstID = u.AgentMessageChunk.MessageID
				}
				assert.Equal(t, firstID, u.AgentMessageChunk.MessageID)
				a.WriteString(text)
				if text != big {
					aChunks++
				}
			} else {
				if secondID == "" {
					secondID = u.AgentMessageChunk.MessageID
				}
				assert.Equal(t, secondID, u.AgentMessageChunk.MessageID)
				b.WriteString(text)
				bChunks++
			}
		}
	}
	assert.Equal(t, 1, toolCalls)
	assert.Equal(t, big+wantA.String(), a.String())
	assert.Equal(t, wantB.String(), b.String())
	assert.NotEqual(t, firstID, secondID, "each answer keeps its own message id")
	// The first answer's chunks waited behind the big one: merged, at
	// most split where the writer took the first of them with it.
	assert.LessOrEqual(t, aChunks, 2, "the chunks that waited for the client were merged")
	assert.LessOrEqual(t, bChunks, n)
}
