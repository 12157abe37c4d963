package host_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
)

// A session's first prompt saves it (creates its file, fsynced), but on
// the session's own turn, not on the caller: the ACP service calls
// Prompt on the connection's read loop, where 200 sessions' first
// prompts arriving together would each wait for the fsyncs of those
// before it. While the turn has not started (a prompt hook holds it),
// Prompt has returned and the file does not exist yet; once it runs, the
// file is there, titled from the message, before the answer is shown.
func TestFirstPromptSavesTheSessionOnItsTurnNotOnTheCaller(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	hookStarted, release := make(chan struct{}), make(chan struct{})
	store, err := persistence.OpenStore(dir)
	require.NoError(t, err)
	h := host.New(host.Config{Model: "replay/" + script(t, says("", "hello there")), Mode: policy.ModeFullAccess, Version: "test",
		Store: store, Hooks: []agent.Hook{{Event: agent.HookPromptSubmit, Run: func(ctx context.Context, _ agent.HookInput) (agent.HookOutcome, error) {
			close(hookStarted)
			<-release
			return agent.HookOutcome{}, nil
		}}}})
	require.NoError(t, h.Usable())
	t.Cleanup(h.Close)
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, &client{})
	require.NoError(t, err)
	defer s.Close()

	done := make(chan error, 1)
	require.NoError(t, s.Prompt(context.Background(), []llm.Part{llm.TextPart("Fix the build\nplease")}, func(_ agent.PromptResult, err error) { done <- err }))
	select {
	case <-hookStarted:
	case <-time.After(waitTimeout):
		t.Fatal("the turn did not start")
	}
	file := filepath.Join(dir, s.ID()+".jsonl")
	assert.NoFileExists(t, file, "Prompt returned without creating the file")
	close(release)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(waitTimeout):
		t.Fatal("the prompt did not complete")
	}
	list, err := h.ListSessions(context.Background(), host.ListRequest{})
	require.NoError(t, err)
	require.Len(t, list.Sessions, 1, "saved at its first prompt")
	assert.Equal(t, "Fix the build", list.Sessions[0].Title)
}

// A first prompt whose session cannot be saved (the store directory is
// gone) fails, and nothing of the model's answer is shown (the request,
// sent beside the save, is cancelled: TestFirstSaveThatFailsCancelsTheModelCall):
// a turn whose conversation could not be kept is not run.
func TestFirstPromptThatCannotBeSavedShowsNoAnswer(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	h := newHost(t, script(t, says("", "hello there")), dir)
	c := &client{}
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, c)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, os.RemoveAll(dir))

	done := make(chan error, 1)
	require.NoError(t, s.Prompt(context.Background(), []llm.Part{llm.TextPart("hi")}, func(_ agent.PromptResult, err error) { done <- err }))
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "saving the session")
	case <-time.After(waitTimeout):
		t.Fatal("the prompt did not complete")
	}
	assert.NotContains(t, c.messages(), "hello there", "nothing of the answer was shown")
}

// TestFirstPromptThatCannotBeSavedLeavesTheSessionUsable: once the store
// can be written again, the next prompt saves the session and runs; the
// failed one left nothing behind in the conversation.
func TestFirstPromptThatCannotBeSavedLeavesTheSessionUsable(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	h := newHost(t, script(t, says("", "hello there")), dir)
	c := &client{}
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, c)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, os.Rename(dir, dir+".away"))

	prompt := func(text string) error {
		done := make(chan error, 1)
		require.NoError(t, s.Prompt(context.Background(), []llm.Part{llm.TextPart(text)}, func(_ agent.PromptResult, err error) { done <- err }))
		select {
		case err := <-done:
			return err
		case <-time.After(waitTimeout):
			t.Fatal("the prompt did not complete")
			return nil
		}
	}
	require.Error(t, prompt("lost"))
	require.NoError(t, os.Rename(dir+".away", dir))
	require.NoError(t, prompt("kept"))
	assert.Contains(t, c.messages(), "hello there", "the model was called")
	data, err := os.ReadFile(filepath.Join(dir, s.ID()+".jsonl"))
	require.NoError(t, err, "the session was saved at its second prompt")
	assert.Contains(t, string(data), "kept")
	assert.NotContains(t, string(data), `"text":"lost"`, "the failed prompt's message was not kept")
}

// TestFirstPromptSavesTheStateSetBeforeIt: the state a session was given
// before its first prompt (its starting mode and model, then a mode the
// client set) is in the file the prompt saves, right after the header
// and in order, fsynced with it, and a reload restores it.
func TestFirstPromptSavesTheStateSetBeforeIt(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	h := newHost(t, script(t, says("", "hello there")), dir)
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, &client{})
	require.NoError(t, err)
	require.NoError(t, s.SetMode(string(policy.ModeDefault)))
	prompt(t, s, "Fix the build")
	id := s.ID()
	require.NoError(t, s.Close())

	data, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.GreaterOrEqual(t, len(lines), 5)
	var types []string
	for _, l := range lines[:5] {
		var rec struct{ Type, Mode, Title string }
		require.NoError(t, json.Unmarshal([]byte(l), &rec))
		types = append(types, rec.Type+":"+rec.Mode+rec.Title)
	}
	assert.Equal(t, []string{"session:Fix the build", "mode:" + string(policy.ModeFullAccess), "model:", "mode:" + string(policy.ModeDefault), "entry:"}, types)

	s, err = h.LoadSession(context.Background(), id, host.OpenRequest{CWD: cwd}, &client{})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, policy.ModeDefault, s.Core().Mode())
}
