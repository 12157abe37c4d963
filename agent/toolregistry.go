package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/acp-agent/acp-agent/agent/internal/jsonvalidate"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/policy"
)

// ToolSource says where a tool comes from.
type ToolSource string

const (
	ToolSourceNative ToolSource = "native"
	ToolSourceMCP    ToolSource = "mcp"
)

// ToolResult is what a tool returns to the model.
type ToolResult struct {
	Text    string
	IsError bool
	// Content is what the client is shown for the call (a diff, a
	// terminal); nil means Text.
	Content []ToolContent
	// Images are images for the model to see with Text (PartImage parts,
	// base64): sent to models that accept image input, replaced by a note
	// for the others. Show them to the client through Content.
	Images []llm.Part
	// EndTurn, if set, ends the turn once this response's tool calls are
	// done: the text is said to the user as the agent's message (kept in
	// the conversation), and the model is not called again. ask_user uses
	// it where the client cannot show a form: the user's next prompt is
	// the answer; exit_plan_mode when the user did not approve the plan
	// (an error result).
	EndTurn string
	// Windowed: the tool already returned a page of what it has within
	// the size limits (read_file's numbered pages, whose last line says
	// where to continue): the session does not cut it at a line count.
	Windowed bool
	// Context is for the model only, after the result whatever its size:
	// instructions the tool met on the way (a directory's rules files).
	Context string
}

// ToolCallInfo is how a call is shown to the client and what permission
// it needs.
type ToolCallInfo struct {
	Kind      ToolKind
	Title     string
	Locations []Location
	// Preview is shown with the call before it runs, in the permission
	// request too: every file's diff of a patch, say.
	Preview []ToolContent
	// Action decides the permission (policy.Decide).
	Action policy.Action
	// Command is the parsed command line of an ActionExecute call:
	// remembered decisions are keyed on its simple commands.
	Command *policy.CommandLine
	// CommandContext is where Command runs and how its path operands
	// are judged (remembered decisions depend on both).
	CommandContext *policy.CommandContext
	// ApprovalKey is what an "allow always" answer to a call that is
	// neither an edit nor a command is remembered under; "" means the
	// tool's name. An MCP tool's holds a digest of its definition, so a
	// server that changes what a tool says it does after the user allowed
	// it always (the same name, another description or schema) is asked
	// about again. A "reject always" is remembered under the name: it
	// holds whatever the tool says it does later.
	ApprovalKey string
	// CommandFolder is how the permission option names the directory
	// ("." for the workspace root).
	CommandFolder string
	// Escalation, when set, is the model's justification for running a
	// command outside the sandbox: the user is always asked (allow once
	// or reject once), whatever the mode or what was remembered.
	Escalation string
}

// DescribeFunc describes a call with schema-valid arguments. An error
// refuses the call before anything is asked or run (a path outside the
// workspace, a denied command); it goes back to the model.
type DescribeFunc func(args json.RawMessage) (ToolCallInfo, error)

// ToolFunc runs a tool. args is the model's raw argument JSON (untrusted).
// A returned error becomes an error result for the model.
type ToolFunc func(ctx context.Context, args json.RawMessage) (ToolResult, error)

// Tool is a tool the model may call.
type Tool struct {
	Name             string
	Description      string
	ShortDescription string
	// Parameters is the JSON schema of the arguments; nil means none.
	Parameters json.RawMessage
	Source     ToolSource // default native
	Run        ToolFunc
	// Describe, if set, describes each call. Without it a call is shown
	// with the tool's name and kind "other"; a native tool needs no
	// permission (it is the embedding program's own code), an MCP tool
	// asks like a command.
	Describe DescribeFunc
	// Concurrent: consecutive calls of such tools in one response run at
	// the same time (subagents); their outputs are recorded as each ends.
	Concurrent bool
	// Redact, if set, takes secrets out of a call's arguments (the JSON
	// object the model sent) as soon as the model's response ends, before
	// the call is recorded, shown, given to hooks or run: the session
	// file, the client's title and rawInput, and every output see what it
	// returns. It must change only arguments the tool refuses anyway, so
	// the call does the same with either (web_fetch: credentials in a
	// URL).
	Redact func(args json.RawMessage) json.RawMessage
	// Modes, when set, are the only session modes the tool is offered in
	// (exit_plan_mode: read-only); a call in another mode is refused.
	Modes []policy.Mode
	// inferred: Parameters were built by NewTool from a Go type, so they
	// compile (the built-in tools' are checked by their tests); Register
	// leaves compiling them to the tool's first call.
	inferred bool
	// Coming, if set, is called when the model's response names a call of
	// the tool, before its arguments are complete and before the call is
	// checked, asked for or run (and whether it will be): the tool starts
	// what its calls need and takes a while to start (run_command: the
	// sandbox helper). It must return at once; it is called on the
	// session's turn, once for each call named.
	Coming func()
}

// describe returns the call's description.
func (t *Tool) describe(args json.RawMessage) (ToolCallInfo, error) {
	if t.Describe != nil {
		info, err := t.Describe(args)
		if err == nil && info.Title == "" {
			info.Title = t.Name
		}
		return info, err
	}
	info := ToolCallInfo{Kind: ToolKindOther, Title: t.Name, Action: policy.ActionNone}
	if t.Source == ToolSourceMCP {
		info.Action = policy.ActionOther
	}
	return info, nil
}

// usualKind is the kind the tool's calls are shown with, for a call whose
// arguments cannot be described (invalid ones): what it describes empty
// arguments as, else "other".
func (t *Tool) usualKind() ToolKind {
	info, _ := t.describe(json.RawMessage("{}"))
	return cmp.Or(info.Kind, ToolKindOther)
}

// ToolDescriptor describes a registered tool.
type ToolDescriptor struct {
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	ShortDescription string          `json:"shortDescription"`
	Parameters       json.RawMessage `json:"parameters,omitempty"`
	Source           ToolSource      `json:"source"`
	Enabled          bool            `json:"enabled"`
}

// Tool registry errors.
var (
	ErrToolExists   = errors.New("agent: a tool with this name is already registered")
	ErrToolNotFound = errors.New("agent: no such tool")
)

type registeredTool struct {
	tool    Tool
	schema  *jsonvalidate.Schema // compiled Parameters; nil: any object, or not compiled yet (tool.inferred)
	enabled bool
}

// compiled returns the tool's compiled schema: a tool built by NewTool
// has its schema compiled at its first call (once per process: the
// compiled schemas are shared), not when it is registered, since most
// sessions call few of their tools and a compile takes a fraction of a
// millisecond each.
func (rt registeredTool) compiled() (*jsonvalidate.Schema, error) {
	if rt.schema != nil || !rt.tool.inferred {
		return rt.schema, nil
	}
	return compileToolSchema(rt.tool.Name, rt.tool.Parameters)
}

// ToolRegistry is a session's set of tools. It is safe for concurrent use.
// A fork gets a clone, so later changes on either side are isolated.
type ToolRegistry struct {
	mu    sync.RWMutex
	tools map[string]registeredTool
	// byName is the enabled tools sorted by name, built at the first
	// specs after a change (every turn's model request lists them; a
	// session registers its tools one by one, so not at each Register)
	// and dropped by every change, under mu's write lock.
	byName atomic.Pointer[[]*Tool]
}

// NewToolRegistry returns an empty registry.
func NewToolRegistry() *ToolRegistry {
	return &ToolRegistry{tools: make(map[string]registeredTool)}
}

// Register adds an enabled tool. Names are unique. A tool whose schema
// does not compile is refused; one built by NewTool is compiled at its
// first call instead (its schema, inferred from a Go type, compiles).
func (r *ToolRegistry) Register(t Tool) error {
	if t.Name == "" {
		return errors.New("agent: tool name is empty")
	}
	if t.Run == nil {
		return fmt.Errorf("agent: tool %q has no Run function", t.Name)
	}
	if t.Source == "" {
		t.Source = ToolSourceNative
	}
	if t.ShortDescription == "" {
		t.ShortDescription = t.Description
	}
	var schema *jsonvalidate.Schema
	if !t.inferred {
		var err error
		if schema, err = compileToolSchema(t.Name, t.Parameters); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[t.Name]; ok {
		return fmt.Errorf("%w: %q", ErrToolExists, t.Name)
	}
	r.tools[t.Name] = registeredTool{tool: t, schema: schema, enabled: true}
	r.byName.Store(nil)
	return nil
}

// SetEnabled enables or disables a tool; a disabled tool is not offered to
// the model and cannot be called.
func (r *ToolRegistry) SetEnabled(name string, enabled bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt, ok := r.tools[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrToolNotFound, name)
	}
	rt.enabled = enabled
	r.tools[name] = rt
	r.byName.Store(nil)
	return nil
}

// Unregister removes a tool of any source and reports whether it existed.
func (r *ToolRegistry) Unregister(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.tools[name]
	delete(r.tools, name)
	r.byName.Store(nil)
	return ok
}

// UnregisterMCP removes a tool only if it came from an MCP server.
func (r *ToolRegistry) UnregisterMCP(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt, ok := r.tools[name]
	if !ok || rt.tool.Source != ToolSourceMCP {
		return false
	}
	delete(r.tools, name)
	r.byName.Store(nil)
	return true
}

// Descriptors lists every tool, sorted by source ("mcp" before "native")
// and then by name.
func (r *ToolRegistry) Descriptors() []ToolDescriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]ToolDescriptor, 0, len(r.tools))
	for _, rt := range r.tools {
		t := rt.tool
		out = append(out, ToolDescriptor{
			Name: t.Name, Description: t.Description, ShortDescription: t.ShortDescription,
			Parameters: t.Parameters, Source: t.Source, Enabled: rt.enabled,
		})
	}
	slices.SortFunc(out, func(a, b ToolDescriptor) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// ActiveNames lists the enabled tools, sorted.
func (r *ToolRegistry) ActiveNames() []string {
	return r.activeNames(func(*Tool) bool { return true })
}

// activeNames lists the enabled tools allowed, sorted.
func (r *ToolRegistry) activeNames(allowed func(*Tool) bool) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for name, rt := range r.tools {
		if rt.enabled && allowed(&rt.tool) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Clone returns an independent copy.
func (r *ToolRegistry) Clone() *ToolRegistry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c := &ToolRegistry{tools: make(map[string]registeredTool, len(r.tools))}
	for k, v := range r.tools {
		c.tools[k] = v
	}
	return c
}

// active returns the enabled tool called name, if allowed, with its
// compiled schema.
func (r *ToolRegistry) active(name string, allowed func(*Tool) bool) (registeredTool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rt, ok := r.tools[name]
	if !ok || !rt.enabled || !allowed(&rt.tool) {
		return registeredTool{}, false
	}
	return rt, true
}

// coming returns the Coming of the enabled tool called name, if allowed.
func (r *ToolRegistry) coming(name string, allowed func(*Tool) bool) func() {
	if rt, ok := r.active(name, allowed); ok {
		return rt.tool.Coming
	}
	return nil
}

// redactor returns the Redact of the tool called name, enabled or not.
func (r *ToolRegistry) redactor(name string) func(json.RawMessage) json.RawMessage {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tools[name].tool.Redact
}

// specs returns what the model is offered: enabled, allowed tools, sorted
// by name so requests are stable.
func (r *ToolRegistry) specs(allowed func(*Tool) bool) []toolSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	enabled := r.byName.Load()
	if enabled == nil {
		// Built under the read lock: no change can come in between, and
		// readers that build it at once build the same.
		list := make([]*Tool, 0, len(r.tools))
		for _, rt := range r.tools {
			if rt.enabled {
				list = append(list, &rt.tool)
			}
		}
		slices.SortFunc(list, func(a, b *Tool) int { return cmp.Compare(a.Name, b.Name) })
		r.byName.Store(&list)
		enabled = &list
	}
	out := make([]toolSpec, 0, len(*enabled))
	for _, t := range *enabled {
		if allowed(t) {
			out = append(out, toolSpec{name: t.Name, description: t.Description, short: t.ShortDescription, parameters: t.Parameters})
		}
	}
	return out
}

type toolSpec struct {
	name, description, short string
	parameters               json.RawMessage
}
