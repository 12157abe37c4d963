package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// A prompt's attachments reach the model as the same text whichever
// protocol version brought them: a resource link, an embedded text
// resource and an embedded binary one, sent to a v1 and to a v2
// session, make the same user message, naming each URI (the binary one
// by its size only).
func TestBinaryAttachmentsReachTheModelAlikeInV1AndV2(t *testing.T) {
	blocks := []map[string]any{
		{"type": "text", "text": "Review these"},
		{"type": "resource_link", "uri": "file:///tmp/a.go", "name": "a.go", "mimeType": "text/x-go", "description": "the file"},
		{"type": "resource", "resource": map[string]any{"uri": "file:///tmp/b.go", "text": "package b\n"}},
		{"type": "resource", "resource": map[string]any{"uri": "file:///tmp/c.bin", "blob": "AAEC"}},
	}
	userMessage := func(model *scriptedModel) string {
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		require.NoError(t, json.Unmarshal([]byte(model.body(t, 0)), &req))
		last := req.Messages[len(req.Messages)-1]
		require.Equal(t, "user", last.Role)
		var text string
		require.NoError(t, json.Unmarshal(last.Content, &text), "the parts are one text: %s", last.Content)
		return text
	}

	v1Model := newScriptedModel(t, "openai")
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + v1Model.URL + "/v1"}, "--model", "openai/test-model")
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	resp, _ := p.Call(acp.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": blocks})
	acptest.MustResult(t, resp, nil)
	v1 := userMessage(v1Model)

	v2Model := newScriptedModel(t, "openai")
	p = startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + v2Model.URL + "/v1"}, "--model", "openai/test-model")
	p.InitializeV2(nil)
	sid = p.NewSessionV2(t.TempDir())
	id := p.Request(acpv2.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": blocks})
	turn := readTurnV2(t, p, id, false, v2Turn{})
	assert.Equal(t, acpv2.StopReasonEndTurn, turn.stop)

	assert.Equal(t, v1, userMessage(v2Model), "the same user message in v1 and v2")
	for _, want := range []string{
		"[Resource link: a.go <file:///tmp/a.go> (text/x-go): the file]",
		"<resource uri=\"file:///tmp/b.go\">\npackage b\n\n</resource>",
		"[Binary resource file:///tmp/c.bin (application/octet-stream, 4 base64 bytes) attached; its content is not shown]",
	} {
		assert.Contains(t, v1, want)
	}
}
