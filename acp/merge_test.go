package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// wireUpdate is one session/update as a client reads it: its kind and, for
// a chunk, its text, message id and whether it had annotations or _meta.
type wireUpdate struct {
	kind, text, messageID string
	extra                 bool
}

func (u wireUpdate) String() string { return u.kind + "(" + u.messageID + ")" + strconv.Quote(u.text) }

// mergingAgent's prompt sends one chunk, waits until released, then sends
// what script returns (a burst that queues behind the first chunk while
// the client is not reading), and ends the turn.
func mergingAgent(release <-chan struct{}, script []acp.SessionUpdate) *fakeAgent {
	return &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		if err := c.Update(ctx, msgChunk("m1", "first ")); err != nil {
			return nil, err
		}
		<-release
		for _, u := range script {
			if err := c.Update(ctx, u); err != nil {
				return nil, err
			}
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}}
}

func msgChunk(id, text string) acp.SessionUpdate {
	return acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.TextBlock(text), MessageID: id}}
}

func thoughtChunk(id, text string) acp.SessionUpdate {
	return acp.SessionUpdate{AgentThoughtChunk: &acp.ContentChunk{Content: acp.TextBlock(text), MessageID: id}}
}

// slowClientUpdates runs one prompt of a mergingAgent over real pipes with
// a client that reads nothing until the agent has queued the whole burst
// (its writer is blocked on the first chunk meanwhile), then reads the
// session's updates up to the prompt's response.
func slowClientUpdates(t *testing.T, script []acp.SessionUpdate) []wireUpdate {
	t.Helper()
	release := make(chan struct{})
	sent := make(chan struct{})
	a := mergingAgent(release, script)
	inner := a.prompt
	a.prompt = func(ctx context.Context, c *acp.ClientConn, req *acp.PromptRequest) (*acp.PromptResponse, error) {
		defer close(sent)
		return inner(ctx, c, req)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := acp.NewAgentService(a, acp.Options{}).Serve(context.Background(), inR, outW)
		outW.Close()
		served <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		require.NoError(t, <-served)
	})
	r := bufio.NewReader(outR)
	send := func(line string) {
		_, err := io.WriteString(inW, line+"\n")
		require.NoError(t, err)
	}
	readUntilResult := func(id string) (updates []wireUpdate) {
		for {
			line, err := r.ReadBytes('\n')
			require.NoError(t, err)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Update map[string]json.RawMessage `json:"update"`
				} `json:"params"`
			}
			require.NoError(t, json.Unmarshal(line, &m), "%s", line)
			if string(m.ID) == id {
				return updates
			}
			if m.Method != acp.MethodSessionUpdate {
				continue
			}
			var u wireUpdate
			require.NoError(t, json.Unmarshal(m.Params.Update["sessionUpdate"], &u.kind))
			if raw, ok := m.Params.Update["content"]; ok {
				var c map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(raw, &c))
				_ = json.Unmarshal(c["text"], &u.text)
				_, ann := c["annotations"]
				_, meta := c["_meta"]
				_, chunkMeta := m.Params.Update["_meta"]
				u.extra = ann || meta || chunkMeta
			}
			if raw, ok := m.Params.Update["messageId"]; ok {
				require.NoError(t, json.Unmarshal(raw, &u.messageID))
			}
			updates = append(updates, u)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	readUntilResult("1")
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	line, err := r.ReadBytes('\n')
	require.NoError(t, err)
	var created struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(line, &created))
	send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + created.Result.SessionID + `","prompt":[{"type":"text","text":"go"}]}}`)
	// The session's writer takes the first chunk and blocks writing it:
	// nobody reads. Everything after it queues behind it.
	close(release)
	<-sent
	return readUntilResult("3")
}

// TestSlowClientGetsAdjacentTextChunksMerged: the chunks that queue while
// the client is not reading reach it in fewer notifications, with the same
// text in the same order; a chunk is merged only into the one just before
// it, of the same kind and message (the same messageId), plain text on
// both sides, so tool calls, thoughts, other messages, chunks without a
// message id and chunks with annotations or _meta keep their places and
// their fields.
func TestSlowClientGetsAdjacentTextChunksMerged(t *testing.T) {
	var script []acp.SessionUpdate
	var wantA, wantB strings.Builder
	for i := range 100 {
		s := "a" + strconv.Itoa(i) + " "
		script = append(script, msgChunk("m1", s))
		wantA.WriteString(s)
	}
	script = append(script,
		acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: "call1", Title: "read"}},
		thoughtChunk("m1", "hmm "), thoughtChunk("m1", "yes "))
	for i := range 50 {
		s := "b" + strconv.Itoa(i) + " "
		script = append(script, msgChunk("m1", s))
		wantB.WriteString(s)
	}
	annotated := msgChunk("m1", "annotated ")
	annotated.AgentMessageChunk.Content.Text.Annotations = &acp.Annotations{Priority: new(0.5)}
	withMeta := msgChunk("m1", "meta ")
	withMeta.AgentMessageChunk.Meta = json.RawMessage(`{"x":1}`)
	script = append(script, annotated, msgChunk("m1", "after "), msgChunk("m2", "other "), msgChunk("m2", "message "), withMeta,
		msgChunk("", "notice one "), msgChunk("", "notice two "))

	got := slowClientUpdates(t, script)
	// The connection's writer may take a few updates before it blocks on
	// the pipe nobody reads (it buffers its writes), and those go out as
	// they were when it took them; everything after waits and is merged.
	// So the notifications are compared after joining the adjacent ones
	// that the rule allows to be merged: a wrong merge (another kind,
	// message, an annotated chunk, a notice) still shows as a difference.
	assert.Less(t, len(got), 80, "161 updates reached the client in %d notifications: too few merged", len(got))
	want := []wireUpdate{
		{kind: "agent_message_chunk", messageID: "m1", text: "first " + wantA.String()},
		{kind: "tool_call"},
		{kind: "agent_thought_chunk", messageID: "m1", text: "hmm yes "},
		{kind: "agent_message_chunk", messageID: "m1", text: wantB.String()},
		{kind: "agent_message_chunk", messageID: "m1", text: "annotated ", extra: true},
		{kind: "agent_message_chunk", messageID: "m1", text: "after "},
		{kind: "agent_message_chunk", messageID: "m2", text: "other message "},
		{kind: "agent_message_chunk", messageID: "m1", text: "meta ", extra: true},
		// Chunks without a message id are not known to be one message.
		{kind: "agent_message_chunk", text: "notice one "},
		{kind: "agent_message_chunk", text: "notice two "},
	}
	assert.Equal(t, want, joinMergeable(got))
}

// joinMergeable joins adjacent updates the merge rule allows to be one:
// text chunks of the same kind and the same non-empty message id, neither
// with annotations or _meta.
func joinMergeable(us []wireUpdate) []wireUpdate {
	var out []wireUpdate
	for _, u := range us {
		if n := len(out); n > 0 {
			p := &out[n-1]
			text := u.kind == "agent_message_chunk" || u.kind == "agent_thought_chunk"
			if text && p.kind == u.kind && u.messageID != "" && p.messageID == u.messageID && !p.extra && !u.extra {
				p.text += u.text
				continue
			}
		}
		out = append(out, u)
	}
	return out
}

// TestSlowClientMergedChunksStayBounded: a chunk grows by merging only up
// to the outbox's limit; past it the text continues in the next
// notification, still whole and in order.
func TestSlowClientMergedChunksStayBounded(t *testing.T) {
	var script []acp.SessionUpdate
	var want strings.Builder
	want.WriteString("first ")
	piece := strings.Repeat("x", 1000) + " "
	for range 100 { // about 100 KB of text
		script = append(script, msgChunk("m1", piece))
		want.WriteString(piece)
	}
	got := slowClientUpdates(t, script)
	var text strings.Builder
	for _, u := range got {
		require.Equal(t, "agent_message_chunk", u.kind)
		assert.LessOrEqual(t, len(u.text), 16<<10, "a merged chunk's text stays within the limit")
		text.WriteString(u.text)
	}
	assert.Equal(t, want.String(), text.String())
	assert.Greater(t, len(got), 100*1001/(16<<10), "the text was split at the limit")
	assert.Less(t, len(got), 50, "the chunks were merged")
}

// TestClientThatKeepsUpGetsEveryChunkAsSent: when the writer has sent each
// chunk before the next is queued, nothing is merged and nothing waits for
// a merge.
func TestClientThatKeepsUpGetsEveryChunkAsSent(t *testing.T) {
	const n = 50
	seen := make(chan struct{})
	a := &fakeAgent{prompt: func(ctx context.Context, c *acp.ClientConn, _ *acp.PromptRequest) (*acp.PromptResponse, error) {
		for i := range n {
			if err := c.Update(ctx, msgChunk("m1", strconv.Itoa(i)+" ")); err != nil {
				return nil, err
			}
			select {
			case <-seen: // the client has read it
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}}
	c := start(t, a, acp.Options{})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	id := c.Request(acp.MethodSessionPrompt, textPrompt(sid, "go"))
	for i := range n {
		assert.Equal(t, strconv.Itoa(i)+" ", chunkText(t, c.Next()), "chunk %d arrives alone, as sent", i)
		seen <- struct{}{}
	}
	resp, before := c.Await(id)
	acptest.MustResult(t, resp, nil)
	assert.Empty(t, before)
}
