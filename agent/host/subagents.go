package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
)

// ToolTask is the subagent tool.
const ToolTask = "task"

// MaxParallelSubagents bounds the subagents one session runs at once.
const MaxParallelSubagents = 3

// childTools are left out of every subagent: no subagents of its own,
// and questions go through the parent.
var childTools = []string{ToolTask, tools.ToolAskUser, ToolExitPlanMode}

type taskArgs struct {
	Description string   `json:"description" jsonschema:"a few words naming the subagent's job" schema:"minLength=1,maxLength=200"`
	Prompt      string   `json:"prompt" jsonschema:"the complete task" schema:"minLength=1"`
	Tools       []string `json:"tools,omitempty" schema:"maxItems=50"`
	Model       string   `json:"model,omitempty" jsonschema:"a configured model id, e.g. openai/gpt-4.1 (default: this session's)"`
}

// taskTool runs a subagent: a child session with its own id and stored
// transcript, in the same workspace under the same rules and mode, with
// the tools asked for (default: all but task and ask_user) and
// optionally another of the configured models. Clients that advertise
// subagents see it as a session of its own (subagent_update on the
// parent first, then the child's updates under its id); the others see
// its progress in the task's tool call. Its permission requests name it.
func (hs *Session) taskTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[taskArgs]{
		Name: ToolTask,
		Description: "Delegate a self-contained piece of work to a subagent: a fresh session with its own context, in the same workspace under the same mode, whose final message comes back to you as this call's result. " +
			"Use it for a broad search or investigation that would fill your context, or for independent pieces of work that can run at once (call task several times in one response); do small lookups yourself. " +
			"The subagent knows nothing of this conversation: put everything it needs in prompt (the goal, the files and facts you already know, the constraints) and say exactly what its final message must contain (say, the paths and line numbers found, or what it changed and how it checked it). " +
			"The user does not see its answer: tell them what matters from it. The result says how it ended (answered, stopped at its request limit, cancelled). " +
			"tools limits its tools (default: all the coding tools but task and ask_user); model picks another configured model.\n" +
			`Example: {"description": "Find the session store's callers", "prompt": "List every call of store.Save and store.Load in this repository, as path:line with the calling function, and say which ones ignore the error. Change nothing."}`,
		ShortDescription: "Run a subagent",
		Concurrent:       true,
		Describe: func(a taskArgs) (agent.ToolCallInfo, error) {
			return agent.ToolCallInfo{Kind: agent.ToolKindOther, Title: "Subagent: " + subagentName(a.Description), Action: policy.ActionRead}, nil
		},
		Run: func(ctx context.Context, a taskArgs) (agent.ToolResult, error) {
			// The name goes into titles and permission questions: one
			// printable line the model cannot make show something else.
			a.Description = subagentName(a.Description)
			return hs.runSubagent(ctx, a)
		},
	})
}

// subagentName is a task's description as the child's name: one line of
// printable text (no newlines, no bidi overrides or other invisible
// characters), at most 200 characters.
func subagentName(description string) string {
	if n := oneLinePreview(description, 200); n != "" {
		return n
	}
	return "(no description)"
}

// runSubagent creates, announces, runs and keeps a child session.
func (hs *Session) runSubagent(ctx context.Context, a taskArgs) (agent.ToolResult, error) {
	select {
	case hs.subSem <- struct{}{}:
		defer func() { <-hs.subSem }()
	case <-ctx.Done():
		return agent.ToolResult{}, context.Cause(ctx)
	}
	parent := hs.s
	model := parent.CurrentModel()
	if a.Model != "" {
		e, ok := hs.h.modelByID(a.Model)
		if !ok || !usableWith(e, hs.routes) {
			return agent.ToolResult{}, fmt.Errorf("model %q is not a usable configured model", a.Model)
		}
		model = agent.SessionModel{ID: e.choice.Spec, Model: hs.h.modelFor(e, hs.routes), Name: e.spec.Model, Info: e.info, ReasoningEffort: e.level}
	}
	known := parent.ActiveToolNames()
	allowed := slices.DeleteFunc(slices.Clone(known), func(n string) bool { return slices.Contains(childTools, n) })
	if len(a.Tools) > 0 {
		for _, n := range a.Tools {
			if !slices.Contains(allowed, n) {
				return agent.ToolResult{}, fmt.Errorf("tool %q cannot be given to a subagent (available: %s)", n, strings.Join(allowed, ", "))
			}
		}
		allowed = a.Tools
	}
	id := uuid.NewString()
	title := "Subagent: " + a.Description
	sc, visible := hs.c.(SubagentClient)
	visible = visible && hs.c.Features().Subagents

	var child *Session
	var childConn Child    // a visible child's side of the client
	var childClient Client // the child's own client
	open := func(c Client) (*Session, error) {
		childClient = c
		// The editor's fs/* and terminal/* go under a session id the
		// client knows: the child's own when it shows the child, the
		// parent's otherwise.
		editorID := id
		if !visible {
			editorID = parent.ID()
		}
		cfg, err := hs.h.sessionConfig(id, editorID, parent.CWD(), hs.extra, c, hs.routes)
		if err != nil {
			return nil, err
		}
		cfg.Title = title
		cfg.Mode = parent.Mode()
		cfg.ClientPrompt = hs.clientPrompt
		cfg.Model, cfg.ModelName, cfg.ModelID, cfg.ModelInfo, cfg.ReasoningEffort = model.Model, model.Name, model.ID, model.Info, model.ReasoningEffort
		cfg.AllowedTools = allowed
		// Its permission requests name it, wherever they are shown.
		cfg.Permissions = namedPermissions{inner: c, name: a.Description}
		if !visible {
			prog := &childProgress{ctx: ctx, title: a.Description}
			cfg.Sink, cfg.Permissions = prog, namedPermissions{inner: hs.c, name: a.Description}
		}
		j, err := hs.h.createFile(&cfg, hs.extra, parent.ID())
		if err != nil {
			closeWorkspace(cfg.Workspace)
			return nil, err
		}
		if j != nil {
			if err := j.updateHeader(func(h *persistence.Header) { h.Title, h.Subagent = title, true }); err != nil {
				hs.log.Warn("saving the subagent's header", "error", err)
			}
		}
		s := agent.NewSession(cfg)
		child = hs.h.wrapSession(s, c, j, hs.extra, cfg.Workspace)
		child.bindSessionTools(false)
		child.clientPrompt, child.routes = hs.clientPrompt, hs.routes
		if hs.cp != nil && child.ws != nil {
			// Its file changes are part of the parent's turn: rewinding
			// the parent puts them back too.
			child.ws.SetCheckpointer(hs.cp)
		}
		return child, nil
	}
	type outcome struct {
		res agent.PromptResult
		err error
	}
	done := make(chan outcome, 1)
	submit := func() error {
		return child.s.Submit(ctx, []llm.Part{llm.TextPart(a.Prompt)}, agent.PromptOptions{
			OnComplete: func(res agent.PromptResult, err error) { done <- outcome{res, err} }})
	}
	if visible {
		// Registered with its updates held and its work queued before the
		// client hears of it, so that a cancel naming it always finds the
		// work; its updates go out only after the announcement on the
		// parent.
		var err error
		if childConn, err = sc.OpenChild(id, open); err != nil {
			return agent.ToolResult{}, err
		}
		hs.addChild(child, true)
		// The task, as the child received it, before its work (the
		// child's updates wait for the announcement below).
		task := messageIDs()
		sendMessage(childClient, task.in, task.out, parent.ID(), id, a.Prompt)
		if err := submit(); err != nil {
			return agent.ToolResult{}, err
		}
		// The client may cancel the child alone.
		sc.Subagent(SubagentEvent{ID: id, Title: title, Description: oneLinePreview(a.Prompt, 200), Cancellable: true,
			State: "running", CWD: parent.CWD()})
		// ... and as the parent sent it.
		sendMessage(hs.c, task.out, task.in, parent.ID(), id, a.Prompt)
		_ = sc.Drained(context.WithoutCancel(ctx))
		childConn.Release()
	} else {
		if _, err := open(hs.c); err != nil {
			return agent.ToolResult{}, err
		}
		hs.addChild(child, false)
		if err := submit(); err != nil {
			return agent.ToolResult{}, err
		}
	}
	o := <-done
	res, err := o.res, o.err
	if visible {
		// The answer goes back to the parent: sent by the child, then,
		// once the child is idle, received by the parent.
		answer := strings.TrimSpace(res.Text)
		replied := err == nil && answer != "" && res.StopReason != agent.StopCancelled
		reply := messageIDs()
		if replied {
			sendMessage(childClient, reply.out, reply.in, id, parent.ID(), answer)
		}
		// The child's updates reach the client before the parent goes on.
		_ = childConn.Drained(context.WithoutCancel(ctx))
		sc.Subagent(SubagentEvent{ID: id, State: "idle"})
		if replied {
			sendMessage(hs.c, reply.in, reply.out, id, parent.ID(), answer)
		}
	}
	if err != nil && ctx.Err() != nil {
		return agent.ToolResult{}, context.Cause(ctx)
	}
	if errors.Is(err, agent.ErrPromptCancelled) || res.StopReason == agent.StopCancelled {
		return agent.ToolResult{Text: fmt.Sprintf("The subagent (session %s) was cancelled before it finished.", id), IsError: true}, nil
	}
	if err != nil {
		return agent.ToolResult{}, fmt.Errorf("the subagent (session %s) failed: %w", id, err)
	}
	text := strings.TrimSpace(res.Text)
	if text == "" {
		text = "(the subagent gave no answer)"
	}
	// How it ended, so the parent does not take a stopped subagent's last
	// words for a finished job.
	switch res.StopReason {
	case agent.StopMaxTurnRequests:
		return agent.ToolResult{Text: fmt.Sprintf("Subagent %q (session %s) did not finish: it reached its limit of model requests. Its summary of where it stopped:\n%s", a.Description, id, text)}, nil
	case agent.StopMaxTokens:
		return agent.ToolResult{Text: fmt.Sprintf("Subagent %q (session %s) did not finish: its answer was cut off at the output-token limit. What it wrote:\n%s", a.Description, id, text)}, nil
	case agent.StopRefusal:
		return agent.ToolResult{Text: fmt.Sprintf("Subagent %q (session %s) refused the task:\n%s", a.Description, id, text), IsError: true}, nil
	}
	return agent.ToolResult{Text: fmt.Sprintf("Subagent %q (session %s) finished and answered:\n%s", a.Description, id, text)}, nil
}

// messageIDs are the ids of one message between two sessions: out on
// the sender's session, in on the recipient's.
func messageIDs() struct{ out, in string } {
	return struct{ out, in string }{uuid.NewString(), uuid.NewString()}
}

// sendMessage shows a message between sessions from and to on c's
// session (as id there; other is its id on the other session), if c
// shows such messages.
func sendMessage(c Client, id, other, from, to, text string) {
	if m, ok := c.(SessionMessenger); ok && c.Features().Subagents {
		m.SessionMessage(SessionMessage{ID: id, OtherID: other, From: from, To: to, Text: text})
	}
}

// addChild keeps a child to close with the parent.
func (hs *Session) addChild(c *Session, registered bool) {
	hs.mu.Lock()
	hs.children = append(hs.children, childRef{s: c, registered: registered})
	hs.mu.Unlock()
	// The child took the parent's mode before it was listed here: a
	// narrower mode the user chose in between (narrowChildren did not
	// see the child yet) holds for it too. A change after the listing
	// finds it (narrowChildren), and this reads the parent's mode after
	// that change's SetMode.
	if m := hs.s.Mode(); modeRank(c.s.Mode()) > modeRank(m) {
		c.s.SetMode(m)
		if registered {
			c.c.ModeChanged(m)
		}
	}
}

// closeChildren ends the session's subagents (with the parent).
func (hs *Session) closeChildren() {
	hs.mu.Lock()
	children := hs.children
	hs.children = nil
	hs.mu.Unlock()
	for _, c := range children {
		if sc, ok := hs.c.(SubagentClient); ok && c.registered {
			sc.CloseChild(c.s.s.ID())
		} else {
			c.s.Close()
		}
	}
}

// narrowChildren keeps the session's subagents, which took its mode when
// they started, from doing more than the mode the user has just chosen
// for it: a child whose mode lets more through without a question takes
// m (one the user narrowed further, a visible child, keeps its own).
// Only a visible child's client is told: an invisible one's is the
// parent's.
func (hs *Session) narrowChildren(m policy.Mode) {
	hs.mu.Lock()
	children := slices.Clone(hs.children)
	hs.mu.Unlock()
	for _, c := range children {
		if modeRank(c.s.s.Mode()) > modeRank(m) {
			c.s.s.SetMode(m)
			if c.registered {
				c.s.c.ModeChanged(m)
			}
		}
	}
}

// modeRank orders the modes by what they let through without a
// question.
func modeRank(m policy.Mode) int {
	switch m {
	case policy.ModeReadOnly:
		return 0
	case policy.ModeDefault:
		return 1
	case policy.ModeAcceptEdits:
		return 2
	}
	return 3
}

// childRef is a subagent of a session; registered ones are the client's
// (SubagentClient.OpenChild), which closes them.
type childRef struct {
	s          *Session
	registered bool
}

// namedPermissions asks through inner with the subagent's name in the
// tool call's title.
type namedPermissions struct {
	inner agent.PermissionRequester
	name  string
}

func (n namedPermissions) RequestPermission(ctx context.Context, req agent.PermissionRequest) (agent.PermissionAnswer, error) {
	req.ToolCall.Title = "[subagent " + n.name + "] " + req.ToolCall.Title
	return n.inner.RequestPermission(ctx, req)
}

// childProgress shows a subagent's progress in its task tool call, for
// clients that do not show subagents: one line per tool call it makes,
// then its answer as it streams.
type childProgress struct {
	ctx   context.Context // the task tool call's
	title string
	mu    sync.Mutex
	lines []string
	text  strings.Builder
}

func (p *childProgress) Update(_ context.Context, u agent.Update) error {
	p.mu.Lock()
	switch {
	case u.Kind == agent.UpdateToolCall && u.ToolCall != nil:
		p.lines = append(p.lines, "▸ "+u.ToolCall.Title)
		if len(p.lines) > 20 {
			p.lines = p.lines[len(p.lines)-20:]
		}
	case u.Kind == agent.UpdateMessage:
		p.text.WriteString(u.Text)
	default:
		p.mu.Unlock()
		return nil
	}
	view := "Subagent " + p.title + ":"
	if len(p.lines) > 0 {
		view += "\n" + strings.Join(p.lines, "\n")
	}
	if t := p.text.String(); t != "" {
		view += "\n\n" + t
	}
	p.mu.Unlock()
	agent.ToolProgress(p.ctx, []agent.ToolContent{agent.TextContent(view)})
	return nil
}

// announceChildren tells a client that shows subagents about the stored
// children of a session it opened (idle), in the order they were started
// (the store lists by modification time, which parallel children share):
// each can then be opened under its own id.
func (hs *Session) announceChildren() {
	sc, ok := hs.c.(SubagentClient)
	if !ok || !hs.c.Features().Subagents || hs.h.store == nil {
		return
	}
	var children []persistence.Summary
	cursor := ""
	for {
		page, err := hs.h.store.List(persistence.ListOptions{Cursor: cursor, Archived: persistence.ArchivedInclude, Limit: 500})
		if err != nil {
			hs.log.Warn("listing the subagents", "error", err)
			return
		}
		for _, c := range page.Sessions {
			if c.Subagent && c.ParentSessionID == hs.s.ID() {
				children = append(children, c)
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	slices.SortFunc(children, func(a, b persistence.Summary) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	for _, c := range children {
		sc.Subagent(SubagentEvent{ID: c.ID, Title: c.Title, State: "idle", CWD: c.CWD})
	}
}
