package acpagent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
)

// Seed 003 "Stop Hook" as an ACP client sees it: the chunks of the turn
// add up to exactly executeAndAppend's final response, and session/load
// after a restart replays the same text.
func TestSeed003_StopHookMessagesReachTheClientAndTheStoredTranscript(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	hooks := func(cfg *acpagent.Config) {
		cfg.StopHooks = []agent.StopHook{
			func(_ context.Context, in agent.StopHookInput) (string, error) { return "checked: " + in.Answer, nil },
			func(context.Context, agent.StopHookInput) (string, error) { return "  ", nil },
			func(context.Context, agent.StopHookInput) (string, error) { return "second\n", nil },
		}
	}
	c := e.start(nil, hooks)
	sid := c.NewSession(cwd)
	text, _ := say(t, c, sid, "hello")
	const want = "1 user messages so far\n\n[StopHook]\nchecked: 1 user messages so far\n\nsecond"
	assert.Equal(t, want, text, "the client sees the answer, the marker and the messages")
	c.Stop()

	c2 := e.start(nil)
	resp, replay := loadSession(t, c2, acp.MethodSessionLoad, sid, cwd)
	acptest.MustResult(t, resp, nil)
	var replayed strings.Builder
	for _, u := range replay {
		if u.AgentMessageChunk != nil {
			replayed.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	assert.Equal(t, want, replayed.String(), "the stored transcript holds what the hooks added")
}
