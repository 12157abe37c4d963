package structured

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// Model is the minimal model interface the structured requests need: one
// completion of a conversation. The agent adapts its providers to it.
// Implementations must be safe for concurrent use if the caller makes
// concurrent requests.
type Model interface {
	Complete(ctx context.Context, msgs []llm.Message) (string, error)
}

// ModelFunc adapts a function to Model.
type ModelFunc func(ctx context.Context, msgs []llm.Message) (string, error)

// Complete calls f.
func (f ModelFunc) Complete(ctx context.Context, msgs []llm.Message) (string, error) {
	return f(ctx, msgs)
}

// StreamingModel is a Model that can also deliver its answer in chunks.
// Stream calls yield with each chunk of text, in order, and stops early
// with yield's error if yield returns one.
type StreamingModel interface {
	Model
	Stream(ctx context.Context, msgs []llm.Message, yield func(chunk string) error) error
}

// Stream sends msgs to m and returns the Response at once; the answer is
// written to it from a new goroutine (chunk by chunk when m is a
// StreamingModel, else in one piece), which ends when the model call
// does. Each call makes an independent request and Response. model may
// be nil (no validation).
func Stream(ctx context.Context, m Model, msgs []llm.Message, model *OutputModel, opts ...Option) *Response {
	r := NewResponse(model, opts...)
	go func() {
		var err error
		if sm, ok := m.(StreamingModel); ok {
			err = sm.Stream(ctx, msgs, func(chunk string) error {
				_, werr := r.WriteString(chunk)
				return werr
			})
		} else {
			var text string
			text, err = m.Complete(ctx, msgs)
			if err == nil {
				_, err = r.WriteString(text)
			}
		}
		if err != nil {
			err = fmt.Errorf("structured: model request: %w", err)
		}
		_ = r.CloseWithError(err) // the error is delivered through the Response
	}()
	return r
}

// Request sends the prompt (ToMessages(false)) to m and returns the
// answer: the parsed, coerced and validated value when the prompt has an
// Output (and its Format is JSON), else the text.
func Request(ctx context.Context, m Model, p *Prompt) (any, error) {
	text, err := m.Complete(ctx, p.ToMessages(false))
	if err != nil {
		return nil, fmt.Errorf("structured: model request: %w", err)
	}
	if p.Output == nil || !strings.EqualFold(p.Format(), FormatJSON) {
		return text, nil
	}
	om, err := p.OutputModel()
	if err != nil {
		return nil, err
	}
	return om.Parse(text)
}

// Tool is a function the model may plan to call.
type Tool struct {
	Name        string
	Description string
	// Args describes the arguments, an object node; nil means none. The
	// planned arguments are coerced to it and validated before Run.
	Args *Node
	Run  func(ctx context.Context, args map[string]any) (any, error)
}

// ToolCall is one planned call: {"tool": name, "args": {...}}.
type ToolCall struct {
	Tool    string         `json:"tool"`
	Args    map[string]any `json:"args"`
	Purpose string         `json:"purpose,omitempty"`
}

// ActionResult is the outcome of a ToolCall, as injected into the second
// request's action_results.
type ActionResult struct {
	Tool    string         `json:"tool"`
	Args    map[string]any `json:"args"`
	Purpose string         `json:"purpose,omitempty"`
	Result  any            `json:"result,omitempty"`
	Error   string         `json:"error,omitempty"`
}

// ErrUnknownTool is reported (in ActionResult.Error, or wrapped by Plan)
// for a call to a tool that was not offered.
var ErrUnknownTool = errors.New("structured: unknown tool")

// planOutput is the structure a plan must have.
func planOutput(tools []Tool) *Node {
	names := make([]any, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return List(Object(
		Req("tool", OneOf("name of the tool to call", names...)),
		Req("args", Leaf(TypeObject, "arguments for the tool, as its args structure says")),
		Prop("purpose", String("what this call is for")),
	))
}

// toolList renders the tools for the planning prompt.
func toolList(tools []Tool) string {
	var sb strings.Builder
	for i, t := range tools {
		if i > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString("- " + t.Name)
		if t.Description != "" {
			sb.WriteString(": " + oneLine(t.Description))
		}
		args := Object()
		if t.Args != nil {
			args = t.Args
		}
		sb.WriteString("\n  args: " + strings.ReplaceAll(args.Describe(), "\n", "\n  "))
	}
	return sb.String()
}

// PlanPrompt returns the prompt that asks the model to plan tool use for
// p: p's history, info and sections, the tools offered (as an
// available_tools section), p's instructions (as task_instruct), p's
// input, and a JSON output that is a list of {tool, args, purpose}.
func PlanPrompt(p *Prompt, tools []Tool) *Prompt {
	q := &Prompt{
		Info:        p.Info,
		Sections:    append([]Section(nil), p.Sections...),
		Input:       p.Input,
		History:     p.History,
		StrictRoles: p.StrictRoles,
		Logger:      p.Logger,
		Output:      planOutput(tools),
		Instruct: "Decide which of the available tools to call, and with which arguments, to get what you need " +
			"to answer the input. Answer with an empty list if no tool is needed.",
	}
	q.Sections = append(q.Sections, Section{Title: "available_tools", Content: toolList(tools)})
	if !isEmpty(p.Instruct) {
		q.Sections = append(q.Sections, Section{Title: "task_instruct", Content: p.Instruct})
	}
	return q
}

// Plan asks m which tools to call for p: one request with PlanPrompt,
// whose answer (a structured list of {tool, args}) is parsed and validated.
// A call to a tool that is not in tools is a validation error.
func Plan(ctx context.Context, m Model, p *Prompt, tools []Tool) ([]ToolCall, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	v, err := Request(ctx, m, PlanPrompt(p, tools))
	if err != nil {
		return nil, fmt.Errorf("structured: plan tool use: %w", err)
	}
	items, _ := v.([]any) // validated: a list of objects
	calls := make([]ToolCall, 0, len(items))
	for _, it := range items {
		obj, _ := it.(map[string]any)
		c := ToolCall{}
		c.Tool, _ = obj["tool"].(string)
		c.Args, _ = obj["args"].(map[string]any)
		c.Purpose, _ = obj["purpose"].(string)
		calls = append(calls, c)
	}
	return calls, nil
}

// RunTools runs the planned calls one after another, in order (tools may
// have side effects), and returns one result per call. Arguments are
// converted to encoding/json's types (float64 numbers, map[string]any,
// []any), then coerced to and validated against the tool's Args. A failing call
// records its error in the result and does not stop the others; once ctx
// ends, the remaining calls are not run and record ctx's error.
func RunTools(ctx context.Context, tools []Tool, calls []ToolCall) []ActionResult {
	byName := make(map[string]*Tool, len(tools))
	for i := range tools {
		byName[tools[i].Name] = &tools[i]
	}
	results := make([]ActionResult, len(calls))
	for i, c := range calls {
		r := ActionResult{Tool: c.Tool, Args: c.Args, Purpose: c.Purpose}
		res, err := runTool(ctx, byName[c.Tool], c)
		if err != nil {
			r.Error = err.Error()
		} else {
			r.Result = res
		}
		results[i] = r
	}
	return results
}

func runTool(ctx context.Context, t *Tool, c ToolCall) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTool, c.Tool)
	}
	// Run gets encoding/json's types (float64 numbers) whoever built the
	// call.
	args, ok := normalizeJSON(c.Args).(map[string]any)
	if !ok {
		args = map[string]any{}
	}
	if t.Args != nil {
		om, err := NewOutputModel(t.Args)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		v := om.Coerce(args)
		if err := om.Validate(v); err != nil {
			return nil, fmt.Errorf("tool %s arguments: %w", t.Name, err)
		}
		args, _ = v.(map[string]any)
	}
	if t.Run == nil {
		return nil, fmt.Errorf("tool %s has no Run function", t.Name)
	}
	res, err := t.Run(ctx, args)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	return res, nil
}

// InjectResults returns a copy of p with the results added as an
// "action_results" section ("[ACTION_RESULTS]:" followed by the results
// as JSON), for the second request that answers with them. p is not
// modified.
func InjectResults(p *Prompt, results []ActionResult) *Prompt {
	q := p.Clone()
	q.Sections = append(q.Sections, Section{Title: "action_results", Content: results})
	return q
}

// RequestWithTools is the whole tool-use round: Plan, RunTools,
// InjectResults, then Request with the injected prompt. It returns the
// final answer and the action results (nil when no tool was planned, in
// which case the prompt is sent as it is).
func RequestWithTools(ctx context.Context, m Model, p *Prompt, tools []Tool) (any, []ActionResult, error) {
	calls, err := Plan(ctx, m, p, tools)
	if err != nil {
		return nil, nil, err
	}
	q := p
	var results []ActionResult
	if len(calls) > 0 {
		results = RunTools(ctx, tools, calls)
		q = InjectResults(p, results)
	}
	v, err := Request(ctx, m, q)
	if err != nil {
		return nil, results, err
	}
	return v, results, nil
}
