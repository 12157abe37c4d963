package host_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/host"
)

// userTexts are the texts of the user entries of s's transcript.
func userTexts(s *agent.Session) []string {
	var out []string
	for _, e := range s.Transcript() {
		if e.Kind == agent.EntryUser {
			for _, p := range e.Content {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// A fork taken while a session's first answer is awaited, once the first
// message is saved (on disk, shown to the user), holds that message, in
// memory and in its own file: what the source acknowledged is the fork's
// too, however slow the model's first token. A fork taken while the save
// itself is still running (the message not acknowledged yet) holds the
// session as it was before the message, as a fork taken before the
// prompt would; either way the source's turn goes on unharmed.
func TestAForkDuringTheFirstAnswerHoldsTheSavedMessage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		saveHeld  bool // the fork comes while the first save runs
		forkHolds []string
	}{
		{"after the save", false, []string{"Fix the build"}},
		{"during the save", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, cwd := t.TempDir(), t.TempDir()
			asked, answer := make(chan struct{}, 1), make(chan struct{})
			m := newChatModel(t, func(n int, w http.ResponseWriter, _ *http.Request) {
				if n == 0 {
					asked <- struct{}{}
					<-answer // the model's first token is slow
				}
				writeChunks(w, "done")
			})
			c := &client{}
			h, s, save := heldSession(t, m, dir, cwd, c)
			t.Cleanup(func() {
				select {
				case <-answer:
				default:
					close(answer)
				}
			})
			file := filepath.Join(dir, s.ID()+".jsonl")
			if !tc.saveHeld {
				save.free()
			}
			done := startPrompt(t, s, "Fix the build")
			await(t, asked, "the model to be asked")
			assert.Equal(t, 1, strings.Count(m.body(0), "Fix the build"), "the model is sent the message once")
			if !tc.saveHeld {
				// The message is acknowledged: in the session's file.
				deadline := time.Now().Add(waitTimeout)
				for {
					data, _ := os.ReadFile(file)
					if strings.Contains(string(data), "Fix the build") {
						break
					}
					require.True(t, time.Now().Before(deadline), "the first message was not saved")
					time.Sleep(5 * time.Millisecond)
				}
			} else {
				await(t, save.held, "the first save to start")
			}

			f, err := h.ForkSession(context.Background(), host.ForkRequest{SourceID: s.ID()}, s, &client{})
			require.NoError(t, err)
			assert.Equal(t, tc.forkHolds, userTexts(f.Core()), "the fork's transcript")
			fid := f.ID()
			require.NoError(t, f.Close())
			again, err := h.LoadSession(context.Background(), fid, host.OpenRequest{CWD: cwd}, &client{})
			require.NoError(t, err)
			assert.Equal(t, tc.forkHolds, userTexts(again.Core()), "the fork's file")
			require.NoError(t, again.Close())

			save.free()
			close(answer)
			out := await(t, done, "the prompt to end")
			require.NoError(t, out.err)
			assert.Equal(t, "done", c.messages())
			assert.Equal(t, []string{"Fix the build"}, userTexts(s.Core()))
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, 1, strings.Count(string(data), `"text":"Fix the build"`), "the message is recorded once")
		})
	}
}
