package host_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The host's own tests: sessions created, prompted, stored, loaded,
// rewound and forked, and subagents run, through the host's Go API with
// a client of the test's (no protocol), on the replay model.

const waitTimeout = 10 * time.Second

// client is a host.Client that records what it is told and answers
// permission requests with answer.
type client struct {
	features host.Features
	answer   string // the option id it picks; "" picks the first

	mu          sync.Mutex
	updates     []agent.Update
	posted      []agent.Update
	commands    [][]host.Command
	modes       []policy.Mode
	options     [][]host.Option
	permissions []agent.PermissionRequest
}

func (c *client) Update(_ context.Context, u agent.Update) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, u)
	return nil
}

func (c *client) Post(u agent.Update) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.posted = append(c.posted, u)
	return nil
}

func (c *client) RequestPermission(_ context.Context, req agent.PermissionRequest) (agent.PermissionAnswer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.permissions = append(c.permissions, req)
	id := req.Options[0].ID
	if c.answer != "" {
		id = c.answer
	}
	return agent.PermissionAnswer{OptionID: id}, nil
}

func (c *client) Features() host.Features    { return c.features }
func (c *client) Editor(string) tools.Editor { return tools.Editor{} }
func (c *client) ModeChanged(m policy.Mode)  { c.mu.Lock(); c.modes = append(c.modes, m); c.mu.Unlock() }
func (c *client) OptionsChanged(opts []host.Option) {
	c.mu.Lock()
	c.options = append(c.options, opts)
	c.mu.Unlock()
}
func (c *client) CommandsChanged(cmds []host.Command) {
	c.mu.Lock()
	c.commands = append(c.commands, cmds)
	c.mu.Unlock()
}

// messages is the assistant text the client was sent.
func (c *client) messages() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, u := range c.updates {
		if u.Kind == agent.UpdateMessage {
			b.WriteString(u.Text)
		}
	}
	return b.String()
}

// script writes a replay script: turns played in order, or by match.
func script(t *testing.T, turns ...map[string]any) string {
	data, err := json.Marshal(map[string]any{"turns": turns})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

func says(match, text string) map[string]any {
	return map[string]any{"match": match, "events": []any{map[string]any{"text": text}}}
}

func calls(match string, calls ...map[string]any) map[string]any {
	var events []any
	for _, c := range calls {
		events = append(events, map[string]any{"toolCall": c})
	}
	return map[string]any{"match": match, "events": events}
}

// newHost is a host on the replay script, storing sessions in dir ("":
// not stored), in full-access mode.
func newHost(t *testing.T, scriptPath, dir string) *host.Host {
	cfg := host.Config{Model: "replay/" + scriptPath, Mode: policy.ModeFullAccess, Version: "test"}
	if dir != "" {
		store, err := persistence.OpenStore(dir)
		require.NoError(t, err)
		cfg.Store = store
	}
	h := host.New(cfg)
	require.NoError(t, h.Usable())
	t.Cleanup(h.Close)
	return h
}

// prompt runs one prompt on s and returns its result.
func prompt(t *testing.T, s *host.Session, text string) agent.PromptResult {
	t.Helper()
	type outcome struct {
		res agent.PromptResult
		err error
	}
	done := make(chan outcome, 1)
	require.NoError(t, s.Prompt(context.Background(), []llm.Part{llm.TextPart(text)}, func(res agent.PromptResult, err error) {
		done <- outcome{res, err}
	}))
	select {
	case o := <-done:
		require.NoError(t, o.err)
		return o.res
	case <-time.After(waitTimeout):
		t.Fatalf("prompt %q did not complete", text)
		return agent.PromptResult{}
	}
}

// history is a session's history in a compact notation: "u:text",
// "a:text", "t:tool" (a tool call), "p:N" (a plan of N entries).
func history(s *host.Session) []string {
	var out []string
	for _, it := range s.History() {
		switch {
		case it.Plan != nil:
			out = append(out, "p:"+strings.Repeat("x", len(it.Plan.Entries)))
		case it.Entry.Kind == agent.EntryUser:
			out = append(out, "u:"+it.Entry.Text)
		case it.Entry.Kind == agent.EntryAssistant:
			out = append(out, "a:"+it.Entry.Text)
		case it.Entry.Kind == agent.EntryToolOutput:
			out = append(out, "t:"+it.Entry.ToolName)
		}
	}
	return out
}

// A session lives on disk: after its host is gone, another host on the
// same store loads it with its conversation, plan and mode, and goes on.
func TestHostStoresAndLoadsASession(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	path := script(t,
		calls("[plan]", map[string]any{"id": "p1", "name": "update_plan", "arguments": map[string]any{"entries": []any{
			map[string]any{"content": "one", "priority": "high", "status": "in_progress"},
			map[string]any{"content": "two", "priority": "low", "status": "pending"}}}},
			map[string]any{"id": "g1", "name": "glob", "arguments": map[string]any{"pattern": "*"}}),
		says("[hello]", "hello there"),
		says("", "planned"))
	h := newHost(t, path, dir)
	c := &client{}
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, c)
	require.NoError(t, err)
	require.NotEmpty(t, c.commands, "the client is told the commands")
	assert.Contains(t, commandNames(c.commands[0]), "rewind")
	assert.Equal(t, "hello there", prompt(t, s, "[hello] hi").Text)
	prompt(t, s, "[plan] make a plan")
	require.NoError(t, s.SetMode(string(policy.ModeReadOnly)))
	assert.Equal(t, []policy.Mode{policy.ModeReadOnly}, c.modes)
	require.Len(t, c.options, 1, "the options are told after a mode change")
	assert.Equal(t, string(policy.ModeReadOnly), c.options[0][0].Current)
	id := s.ID()
	want := []string{"u:[hello] hi", "a:hello there", "u:[plan] make a plan", "t:update_plan", "p:xx", "t:glob", "a:planned"}
	require.NoError(t, s.Close())
	_, live := h.Session(id)
	assert.False(t, live, "a closed session is not live")

	h2 := newHost(t, path, dir)
	c2 := &client{}
	loaded, err := h2.LoadSession(context.Background(), id, host.OpenRequest{}, c2)
	require.NoError(t, err)
	defer loaded.Close()
	assert.Equal(t, want, history(loaded), "the history as it was shown, the plan after the call that made it")
	assert.Equal(t, policy.ModeReadOnly, loaded.Core().Mode())
	assert.Equal(t, cwd, loaded.Core().CWD(), "the stored working directory")
	st, err := h2.Status(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, host.StatusOpen, st)
	assert.Equal(t, "hello there", prompt(t, loaded, "[hello] again").Text)
	assert.Len(t, loaded.Core().Transcript(), 9, "the loaded conversation went on")

	list, err := h2.ListSessions(context.Background(), host.ListRequest{})
	require.NoError(t, err)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, "[hello] hi", list.Sessions[0].Title, "the first prompt titles it")
}

func commandNames(cmds []host.Command) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Name)
	}
	return out
}

// Without a store sessions live in memory: loading is refused, and a
// session nobody prompted leaves nothing.
func TestHostWithoutAStore(t *testing.T) {
	h := newHost(t, script(t, says("", "ok")), "")
	assert.False(t, h.Stored())
	c := &client{}
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: t.TempDir()}, c)
	require.NoError(t, err)
	defer s.Close()
	prompt(t, s, "hi")
	_, err = h.LoadSession(context.Background(), s.ID(), host.OpenRequest{}, &client{})
	assert.ErrorIs(t, err, host.ErrNotStored)
	_, err = s.Rewind(context.Background(), host.RewindRequest{Undo: true})
	assert.ErrorIs(t, err, host.ErrInvalidRequest, "no file history without a store")
	_, err = h.LoadSession(context.Background(), "no-such-session", host.OpenRequest{}, &client{})
	assert.Error(t, err)
}

// A rewind sets the conversation and the files back to before a user
// message, and its undo brings both back; a reload sees the result.
func TestHostRewindsConversationAndFiles(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	file := filepath.Join(cwd, "a.txt")
	require.NoError(t, os.WriteFile(file, []byte("A0\n"), 0o644))
	path := script(t,
		calls("[one]", map[string]any{"id": "r1", "name": "read_file", "arguments": map[string]any{"path": "a.txt"}},
			map[string]any{"id": "w1", "name": "write_file", "arguments": map[string]any{"path": "a.txt", "content": "A1\n"}}),
		calls("[two]", map[string]any{"id": "w2", "name": "write_file", "arguments": map[string]any{"path": "a.txt", "content": "A2\n"}},
			map[string]any{"id": "w3", "name": "write_file", "arguments": map[string]any{"path": "b.txt", "content": "B\n"}}),
		says("", "done"))
	h := newHost(t, path, dir)
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, &client{})
	require.NoError(t, err)
	prompt(t, s, "[one] first")
	prompt(t, s, "[two] second")
	require.Equal(t, "A2\n", readFile(t, file))
	users := s.Core().ForkableUserMessages()
	require.Len(t, users, 2)

	_, err = s.Rewind(context.Background(), host.RewindRequest{ToUserEntryIndex: ptr(users[0].EntryIndex + 1)})
	var notUser *host.NotAUserMessageError
	require.ErrorAs(t, err, &notUser, "an assistant entry is no point to rewind to")
	assert.ErrorIs(t, err, host.ErrInvalidParams)

	res, err := s.Rewind(context.Background(), host.RewindRequest{ToUserEntryIndex: ptr(users[1].EntryIndex), Files: true})
	require.NoError(t, err)
	assert.Equal(t, users[1].EntryIndex, res.Entries)
	assert.Equal(t, "[two] second", res.Prompt)
	assert.Equal(t, "A1\n", readFile(t, file), "the file is as it was before the second message")
	assert.NoFileExists(t, filepath.Join(cwd, "b.txt"), "a file it created is gone")
	assert.Equal(t, []string{"u:[one] first", "t:read_file", "t:write_file", "a:done"}, history(s))

	_, err = s.Rewind(context.Background(), host.RewindRequest{Undo: true})
	require.NoError(t, err)
	assert.Equal(t, "A2\n", readFile(t, file), "the undo brings the files back")
	assert.Equal(t, "B\n", readFile(t, filepath.Join(cwd, "b.txt")))
	id := s.ID()
	require.NoError(t, s.Close())

	loaded, err := newHost(t, path, dir).LoadSession(context.Background(), id, host.OpenRequest{}, &client{})
	require.NoError(t, err)
	defer loaded.Close()
	assert.Len(t, loaded.Core().ForkableUserMessages(), 2, "the undone rewind is what was stored")
}

func ptr[T any](v T) *T { return &v }

func readFile(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// A fork copies the conversation (all of it, or up to a user message)
// into a session and file of its own; the two go on apart, and the fork
// forgets what the source remembered.
func TestHostForksASession(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	path := script(t, says("[a]", "A"), says("[b]", "B"), says("[c]", "C"))
	h := newHost(t, path, dir)
	src, err := h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, &client{})
	require.NoError(t, err)
	defer src.Close()
	prompt(t, src, "[a] one")
	prompt(t, src, "[b] two")
	users := src.Core().ForkableUserMessages()

	whole, err := h.ForkSession(context.Background(), host.ForkRequest{SourceID: src.ID()}, src, &client{})
	require.NoError(t, err)
	defer whole.Close()
	part, err := h.ForkSession(context.Background(), host.ForkRequest{SourceID: src.ID(), FromUserEntryIndex: ptr(users[1].EntryIndex)}, src, &client{})
	require.NoError(t, err)
	defer part.Close()
	assert.Equal(t, []string{"u:[a] one", "a:A", "u:[b] two", "a:B"}, history(whole))
	assert.Equal(t, []string{"u:[a] one", "a:A"}, history(part))
	prompt(t, part, "[c] three")
	assert.Len(t, src.Core().Transcript(), 4, "the source does not see the fork's turns")

	_, err = h.ForkSession(context.Background(), host.ForkRequest{SourceID: src.ID(), FromUserEntryIndex: ptr(1)}, src, &client{})
	var bad *agent.InvalidForkEntryIndexError
	require.ErrorAs(t, err, &bad)
	assert.ErrorIs(t, err, host.ErrInvalidParams)

	// A stored session that is not live is opened for the fork.
	id := part.ID()
	require.NoError(t, part.Close())
	again, err := h.ForkSession(context.Background(), host.ForkRequest{SourceID: id}, nil, &client{})
	require.NoError(t, err)
	defer again.Close()
	assert.Equal(t, []string{"u:[a] one", "a:A", "u:[c] three", "a:C"}, history(again))
	list, err := h.ListSessions(context.Background(), host.ListRequest{})
	require.NoError(t, err)
	assert.Len(t, list.Sessions, 4)
}

// The task tool runs a subagent: a session of its own, stored, whose
// answer is the tool's result. A client that shows subagents opens it as
// a child and hears it start and end; another sees its progress in the
// task's tool call.
func TestHostRunsSubagents(t *testing.T) {
	path := script(t,
		calls("[delegate]", map[string]any{"id": "t1", "name": "task", "arguments": map[string]any{"description": "count", "prompt": "[child] count"}}),
		says("[child]", "three files"),
		says("", "parent done"))
	for _, shown := range []bool{false, true} {
		t.Run(map[bool]string{false: "inside the tool call", true: "as a child session"}[shown], func(t *testing.T) {
			dir := t.TempDir()
			h := newHost(t, path, dir)
			var c host.Client = &client{}
			sc := &subagentClient{client: client{features: host.Features{Subagents: true}}}
			if shown {
				c = sc
			}
			s, err := h.NewSession(context.Background(), host.NewRequest{CWD: t.TempDir()}, c)
			require.NoError(t, err)
			res := prompt(t, s, "[delegate] please")
			assert.Equal(t, "parent done", res.Text)
			out := s.Core().Transcript()
			i := slices.IndexFunc(out, func(e agent.Entry) bool { return e.Kind == agent.EntryToolOutput && e.ToolName == "task" })
			require.GreaterOrEqual(t, i, 0)
			assert.Contains(t, out[i].Text, "three files", "the child's answer is the task's result")
			list, err := h.ListSessions(context.Background(), host.ListRequest{})
			require.NoError(t, err)
			assert.Len(t, list.Sessions, 1, "the list is the user's conversation, not its subagent")
			files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			require.NoError(t, err)
			assert.Len(t, files, 2, "the child is stored")
			if shown {
				sc.mu.Lock()
				assert.Equal(t, []string{"running", "idle"}, sc.states)
				require.Len(t, sc.children, 1)
				assert.Contains(t, sc.children[0].messages(), "three files", "the child's own updates went to its client")
				sc.mu.Unlock()
			} else {
				var progress bool
				cl := c.(*client)
				cl.mu.Lock() // the session's worker may still be sending
				for _, u := range cl.updates {
					progress = progress || (u.Kind == agent.UpdateToolCallProgress && u.ToolCall != nil && len(u.ToolCall.Content) > 0)
				}
				cl.mu.Unlock()
				assert.True(t, progress, "the child's progress is shown in the task's tool call")
			}
			require.NoError(t, s.Close())
			if shown {
				sc.mu.Lock()
				assert.Len(t, sc.closed, 1, "the parent's close closes its child")
				sc.mu.Unlock()
			}
			// Opened again, the parent tells its client about the child.
			sc2 := &subagentClient{client: client{features: host.Features{Subagents: true}}}
			loaded, err := h.LoadSession(context.Background(), s.ID(), host.OpenRequest{}, sc2)
			require.NoError(t, err)
			defer loaded.Close()
			sc2.mu.Lock()
			assert.Equal(t, []string{"idle"}, sc2.states, "the stored child is announced")
			sc2.mu.Unlock()
		})
	}
}

// subagentClient is a client that shows subagents as sessions of their
// own.
type subagentClient struct {
	client
	states   []string
	children []*client
	open     []*host.Session
	closed   []string
}

func (c *subagentClient) OpenChild(id string, open func(host.Client) (*host.Session, error)) (host.Child, error) {
	child := &client{}
	s, err := open(child)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.children = append(c.children, child)
	c.open = append(c.open, s)
	c.mu.Unlock()
	return child, nil
}

func (c *subagentClient) CloseChild(id string) {
	c.mu.Lock()
	i := slices.IndexFunc(c.open, func(s *host.Session) bool { return s.ID() == id })
	s := c.open[i]
	c.closed = append(c.closed, id)
	c.mu.Unlock()
	s.Close()
}

func (c *subagentClient) Subagent(ev host.SubagentEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.states = append(c.states, ev.State)
}

func (c *subagentClient) Drained(context.Context) error { return nil }

// A client's child side: updates are delivered at once.
func (c *client) Release()                      {}
func (c *client) Drained(context.Context) error { return nil }

// Slash commands run in a prompt's place; options change through the
// session and the client hears of it.
func TestHostCommandsAndOptions(t *testing.T) {
	h := newHost(t, script(t, says("", "ok")), t.TempDir())
	c := &client{}
	s, err := h.NewSession(context.Background(), host.NewRequest{CWD: t.TempDir()}, c)
	require.NoError(t, err)
	defer s.Close()
	res := prompt(t, s, "/cost")
	assert.Contains(t, res.Text, "Token: 0 in / 0 out", "/cost answers with the usage")
	assert.Empty(t, s.Core().Transcript(), "a command is not a message to the model")
	res = prompt(t, s, "/mode accept-edits")
	assert.Equal(t, "Mode: accept-edits", res.Text)
	assert.Equal(t, policy.ModeAcceptEdits, s.Core().Mode())
	res = prompt(t, s, "/model nobody/none")
	assert.True(t, strings.HasPrefix(res.Text, `/model: unknown model "nobody/none"; the models are replay/`), "what was wrong and the choices, no protocol words: %q", res.Text)
	res = prompt(t, s, "/mode plan")
	assert.Equal(t, `/mode: unknown mode "plan"; modes are read-only, default, accept-edits, full-access`, res.Text)
	_, err = s.SetOption(host.OptionModel, "nobody/none")
	assert.ErrorIs(t, err, host.ErrInvalidParams)
	opts, err := s.SetOption(host.OptionMode, string(policy.ModeDefault))
	require.NoError(t, err)
	assert.Equal(t, string(policy.ModeDefault), opts[0].Current)
	assert.Equal(t, []policy.Mode{policy.ModeAcceptEdits, policy.ModeDefault}, c.modes)
	_, err = s.SetOption("no_such_option", "x")
	assert.ErrorIs(t, err, host.ErrInvalidParams)
}
