package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// A session's first message is saved (its file created with the message
// in it: fsyncs, a rename, the directory's fsync) beside the model call
// that answers it, not before it: a new session's first token does not
// wait for the disk. Nothing of the answer is shown before the message
// and the file are on disk. These tests hold the save (Config's test
// hook, where a slow disk would make it wait) with the host's journal on
// a real directory and a model server speaking OpenAI's wire format.

// heldSave is a save hook that holds the first save until release.
type heldSave struct {
	held, release chan struct{}
	once, freed   sync.Once
}

func newHeldSave() *heldSave {
	return &heldSave{held: make(chan struct{}), release: make(chan struct{})}
}

// free releases the save (once).
func (h *heldSave) free() { h.freed.Do(func() { close(h.release) }) }

func (h *heldSave) hook() {
	h.once.Do(func() {
		close(h.held)
		<-h.release
	})
}

// chatModel is an OpenAI chat-completions server whose answer to request
// n (from 0) is answer(n, w, r); it records the requests' bodies.
type chatModel struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newChatModel(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *chatModel {
	m := &chatModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		data, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		n := len(m.bodies)
		m.bodies = append(m.bodies, string(data))
		m.mu.Unlock()
		answer(n, w, r)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *chatModel) body(n int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bodies[n]
}

// writeChunks streams texts as chat-completion chunks, then the finish.
func writeChunks(w http.ResponseWriter, texts ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, text := range texts {
		data, _ := json.Marshal(text)
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", data)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	w.(http.Flusher).Flush()
}

// heldHost is a host storing sessions in dir, whose model is m, with
// save as its save hook.
func heldHost(t *testing.T, m *chatModel, dir string, save *heldSave) *host.Host {
	store, err := persistence.OpenStore(dir)
	require.NoError(t, err)
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": m.URL + "/v1"}
	h := host.New(host.WithSaveHook(host.Config{Model: "openai/test-model", Mode: policy.ModeFullAccess, Version: "test", Store: store,
		Getenv: func(k string) string { return env[k] }}, save.hook))
	require.NoError(t, h.Usable())
	t.Cleanup(h.Close)
	return h
}

// diskClient is a client that reads the session's file when the first
// chunk of an answer reaches it: what was on disk before anything of the
// answer was shown.
type diskClient struct {
	*client
	file      string
	once      sync.Once
	atFirstMu sync.Mutex
	atFirst   string
}

func (c *diskClient) Update(ctx context.Context, u agent.Update) error {
	if u.Kind == agent.UpdateMessage {
		c.once.Do(func() {
			data, _ := os.ReadFile(c.file)
			c.atFirstMu.Lock()
			c.atFirst = string(data)
			c.atFirstMu.Unlock()
		})
	}
	return c.client.Update(ctx, u)
}

func (c *diskClient) onDiskAtFirstChunk() string {
	c.atFirstMu.Lock()
	defer c.atFirstMu.Unlock()
	return c.atFirst
}

// heldSession is a new session, for c, of a host storing sessions in dir
// whose model is m and whose first save is held (save) until freed. The
// session is closed at the test's end, after the save is freed: a test
// that fails while the save is held ends instead of waiting for it.
func heldSession(t *testing.T, m *chatModel, dir, cwd string, c host.Client) (*host.Host, *host.Session, *heldSave) {
	save := newHeldSave()
	h := heldHost(t, m, dir, save)
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, c)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	t.Cleanup(save.free) // runs first
	return h, s, save
}

// promptHeld starts a prompt of text on s and waits until its save is
// held and the model was asked (asked: the model's signal).
func promptHeld(t *testing.T, s *host.Session, save *heldSave, asked <-chan struct{}, text string) <-chan promptOutcome {
	done := startPrompt(t, s, text)
	await(t, save.held, "the first save to start")
	await(t, asked, "the model to be asked while the save is held")
	return done
}

type promptOutcome struct {
	res agent.PromptResult
	err error
}

func startPrompt(t *testing.T, s *host.Session, text string) <-chan promptOutcome {
	done := make(chan promptOutcome, 1)
	require.NoError(t, s.Prompt(context.Background(), []llm.Part{llm.TextPart(text)}, func(res agent.PromptResult, err error) {
		done <- promptOutcome{res, err}
	}))
	return done
}

func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting: %s", what)
		panic("unreachable")
	}
}

// quietFor reports whether nothing of an answer reached c for d: a
// window in which a chunk the agent let through would arrive (it reads
// a stream the server has finished writing).
func quietFor(c *client, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if c.messages() != "" {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return c.messages() == ""
}

// The model is asked while the first save is held; its whole answer,
// streamed before the save ends, is held, shown only once the save is
// done, complete and in order; when its first chunk reaches the client,
// the session's file is on disk with the user's message.
func TestFirstAnswerIsHeldUntilTheFirstMessageIsSaved(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	chunks := []string{"one ", "two ", "three ", "four"}
	answered := make(chan struct{}, 1)
	m := newChatModel(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		writeChunks(w, chunks...)
		answered <- struct{}{}
	})
	c := &diskClient{client: &client{}}
	h, s, save := heldSession(t, m, dir, cwd, c)
	c.file = filepath.Join(dir, s.ID()+".jsonl") // before the prompt: Update reads it
	done := promptHeld(t, s, save, answered, "Fix the build")
	assert.Contains(t, m.body(0), "Fix the build")
	assert.True(t, quietFor(c.client, 300*time.Millisecond), "nothing of the answer is shown before the message is saved")
	assert.NoFileExists(t, c.file)
	save.free()
	out := await(t, done, "the prompt to end")
	require.NoError(t, out.err)

	assert.Equal(t, "one two three four", c.messages(), "the held answer, complete and in order")
	var texts []string
	for _, u := range c.updates {
		if u.Kind == agent.UpdateMessage {
			texts = append(texts, u.Text)
		}
	}
	assert.Equal(t, chunks, texts, "one update per chunk, none dropped or merged")
	onDisk := c.onDiskAtFirstChunk()
	assert.Contains(t, onDisk, `"kind":"user"`, "the user's message was on disk before the first chunk was shown")
	assert.Contains(t, onDisk, "Fix the build")
	assert.NotContains(t, onDisk, `"kind":"assistant"`)

	// The file: the message once, then the answer; a reload has both.
	data, err := os.ReadFile(c.file)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(data), `"text":"Fix the build"`), "the message is recorded once")
	assert.Less(t, strings.Index(string(data), `"kind":"user"`), strings.Index(string(data), `"kind":"assistant"`))
	id := s.ID()
	require.NoError(t, s.Close())
	s2, err := h.LoadSession(context.Background(), id, host.OpenRequest{CWD: cwd}, &client{})
	require.NoError(t, err)
	defer s2.Close()
	var kinds []agent.EntryKind
	for _, e := range s2.Core().Transcript() {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []agent.EntryKind{agent.EntryUser, agent.EntryAssistant}, kinds)
}

// A first save that fails cancels the model call beside it at once (the
// model has sent nothing yet) and fails the prompt with the error a
// failed save always gave; nothing of the
// answer is shown, nothing is recorded, and the next prompt saves the
// session and runs, without the lost message.
func TestFirstSaveThatFailsCancelsTheModelCall(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	asked, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	// The first request gets its response's headers and nothing more
	// (the model thinks) until the agent gives it up; the next one is
	// answered.
	m := newChatModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n > 0 {
			writeChunks(w, "answered")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		asked <- struct{}{}
		select {
		case <-r.Context().Done():
			cancelled <- struct{}{}
		case <-time.After(waitTimeout): // not cancelled: the test fails, and ends
		}
	})
	c := &client{}
	_, s, save := heldSession(t, m, dir, cwd, c)
	done := promptHeld(t, s, save, asked, "lost")
	// The disk fails the save: the store's directory is gone.
	require.NoError(t, os.Rename(dir, dir+".away"))
	save.free()
	out := await(t, done, "the prompt to fail")
	require.Error(t, out.err)
	assert.Contains(t, out.err.Error(), "saving the session: creating the session file", "the error a failed save gives")
	await(t, cancelled, "the model call to be cancelled")
	assert.Empty(t, c.messages(), "nothing of the answer was shown")
	assert.Empty(t, s.Core().Transcript(), "nothing was recorded")

	require.NoError(t, os.Rename(dir+".away", dir))
	out = await(t, startPrompt(t, s, "kept"), "the next prompt")
	require.NoError(t, out.err)
	assert.Equal(t, "answered", c.messages())
	assert.NotContains(t, m.body(1), "lost", "the failed message is not in the conversation")
	data, err := os.ReadFile(filepath.Join(dir, s.ID()+".jsonl"))
	require.NoError(t, err, "saved at the next prompt")
	assert.Contains(t, string(data), `"text":"kept"`)
	assert.NotContains(t, string(data), `"text":"lost"`, "the failed message was not kept (its title was: a title is set before the save, as always)")
}

// A prompt cancelled while its first save is held ends cancelled once
// the save is done, with the message kept (as a cancel after the save
// always did); a model that fails at once has its error reported only
// after the save too, the message kept. Either way the next prompt sends
// the message to the model again.
func TestFirstSaveOutlivesACancelAndAFastModelError(t *testing.T) {
	for _, tc := range []struct {
		name string
		// first answers the first request; the agent's cancel, if any,
		// comes after it was asked.
		first  func(w http.ResponseWriter, r *http.Request)
		cancel bool
		check  func(t *testing.T, out promptOutcome)
	}{
		{name: "cancelled", cancel: true,
			first: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-time.After(waitTimeout):
				}
			},
			check: func(t *testing.T, out promptOutcome) {
				require.ErrorIs(t, out.err, agent.ErrPromptCancelled)
			}},
		{name: "model error",
			first: func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, `{"error":{"message":"bad request: no such thing","type":"invalid_request_error"}}`, http.StatusBadRequest)
			},
			check: func(t *testing.T, out promptOutcome) {
				require.Error(t, out.err)
				assert.Contains(t, out.err.Error(), "no such thing", "the model's error")
				assert.NotContains(t, out.err.Error(), "saving the session")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, cwd := t.TempDir(), t.TempDir()
			asked := make(chan struct{}, 1)
			m := newChatModel(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if n > 0 {
					writeChunks(w, "again")
					return
				}
				asked <- struct{}{}
				tc.first(w, r)
			})
			c := &client{}
			_, s, save := heldSession(t, m, dir, cwd, c)
			done := promptHeld(t, s, save, asked, "first words")
			if tc.cancel {
				require.True(t, s.Core().CancelActivePrompt())
			}
			select {
			case <-done:
				t.Fatal("the prompt ended before its message was saved")
			case <-time.After(100 * time.Millisecond):
			}
			save.free()
			tc.check(t, await(t, done, "the prompt to end"))
			data, err := os.ReadFile(filepath.Join(dir, s.ID()+".jsonl"))
			require.NoError(t, err)
			assert.Contains(t, string(data), `"text":"first words"`, "the message is kept")

			out := await(t, startPrompt(t, s, "second words"), "the next prompt")
			require.NoError(t, out.err)
			assert.Contains(t, m.body(1), "first words", "the kept message is in the conversation")
			assert.Equal(t, 1, strings.Count(m.body(1), "first words"), "once")
			assert.Contains(t, c.messages(), "again")
		})
	}
}
