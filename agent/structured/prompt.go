package structured

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// Output formats (Prompt.OutputFormat, Prompt.Format).
const (
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
	FormatText     = "text"
)

// Placeholder messages inserted by StrictRoleOrders.
const (
	HistoryPlaceholder  = "[CHAT HISTORY]"
	ContinuePlaceholder = "[User continue input]"
)

// ErrEmptyPrompt is returned by ToText when the prompt has nothing to ask.
var ErrEmptyPrompt = errors.New("structured: prompt requires at least one of Info, Instruct, Input, Output or Sections")

// Section is an extra titled part of a prompt, rendered as "[TITLE]:"
// followed by its content (e.g. the action_results of InjectResults).
type Section struct {
	Title   string
	Content any
}

// Prompt is a structured request to a model: what it should know (Info),
// do (Instruct) and work on (Input), and the shape of the answer (Output),
// after a chat history. It renders to one text (ToText) or to messages
// (ToMessages).
//
// Info, Instruct, Input and Section contents may be a string (shown as
// is), a []string or []any (one "- item" line each, Info only), a
// map[string]any (one "- key: value" line each in key order, Info only),
// or any other JSON-encodable value (shown as indented JSON).
//
// A Prompt is a plain value: it is not safe to modify while another
// goroutine renders it, but rendering only reads it, so any number of
// goroutines may render the same unchanging Prompt.
type Prompt struct {
	Info     any
	Instruct any
	Input    any
	// Sections are rendered after INFO, before INSTRUCT.
	Sections []Section
	// Output is the structure the answer must have; nil asks for free text.
	Output *Node
	// OutputFormat is the format the user chose: "json", "markdown",
	// "text", or another name. Empty means not chosen; see Format.
	OutputFormat string
	// History is the conversation before this prompt.
	History []llm.Message
	// StrictRoles makes ToMessages apply StrictRoleOrders to the history,
	// for providers that require alternating user/assistant turns.
	StrictRoles bool
	// Logger receives warnings (non-text content skipped); nil discards.
	Logger *slog.Logger
}

// Format returns the effective output format: the user's OutputFormat when
// set, else "json" when an Output is defined, else "markdown". So a prompt
// with only Input answers in markdown, defining Output switches to JSON,
// and neither setting Output before nor after choosing a format overrides
// the user's choice.
func (p *Prompt) Format() string {
	switch {
	case p.OutputFormat != "":
		return p.OutputFormat
	case p.Output != nil:
		return FormatJSON
	}
	return FormatMarkdown
}

// Clone returns a copy of p that shares no slice with it (message parts
// and nodes are shared; they are treated as immutable).
func (p *Prompt) Clone() *Prompt {
	c := *p
	c.Sections = slices.Clone(p.Sections)
	c.History = slices.Clone(p.History)
	return &c
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []string:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// empty reports whether the main prompt has nothing in it.
func (p *Prompt) empty() bool {
	return isEmpty(p.Info) && isEmpty(p.Instruct) && isEmpty(p.Input) && p.Output == nil && len(p.Sections) == 0
}

// onlyInput reports whether Input is the whole main prompt: it is then
// sent as it is, without section headers.
func (p *Prompt) onlyInput() bool {
	return !isEmpty(p.Input) && isEmpty(p.Info) && isEmpty(p.Instruct) && p.Output == nil && len(p.Sections) == 0
}

// render shows a section's content.
func render(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return fmt.Sprint(x)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// renderInline shows a value on one line, for "- key: value" lists.
func renderInline(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// mainLines renders INFO, the sections, INSTRUCT, INPUT, OUTPUT
// REQUIREMENT and the closing "[OUTPUT]:" header, one entry per line, a
// blank entry after each block.
func (p *Prompt) mainLines() []string {
	var lines []string
	if !isEmpty(p.Info) {
		lines = append(lines, "[INFO]:")
		switch x := p.Info.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				lines = append(lines, "- "+k+": "+renderInline(x[k]))
			}
		case []string:
			for _, s := range x {
				lines = append(lines, "- "+s)
			}
		case []any:
			for _, s := range x {
				lines = append(lines, "- "+renderInline(s))
			}
		default:
			lines = append(lines, render(x))
		}
		lines = append(lines, "")
	}
	for _, s := range p.Sections {
		lines = append(lines, "["+strings.ToUpper(s.Title)+"]:", render(s.Content), "")
	}
	if !isEmpty(p.Instruct) {
		lines = append(lines, "[INSTRUCT]:", render(p.Instruct), "")
	}
	if !isEmpty(p.Input) {
		lines = append(lines, "[INPUT]:", render(p.Input), "")
	}
	if p.Output != nil {
		switch f := p.Format(); strings.ToLower(f) {
		case FormatJSON:
			lines = append(lines, "[OUTPUT REQUIREMENT]:", "Data Format: JSON", "Data Structure:", p.Output.Describe(), "")
		case FormatMarkdown:
			lines = append(lines, "[OUTPUT REQUIREMENT]:", "Data Format: markdown text", "")
		case FormatText:
			// Free text: the structure is not shown.
		default:
			lines = append(lines, "[OUTPUT REQUIREMENT]:", "Data Format: "+f, "Data Structure:", p.Output.Describe(), "")
		}
	}
	return append(lines, "[OUTPUT]:")
}

// MainText returns the main prompt, from "[INFO]:" to "[OUTPUT]:", as
// sent in the last user message.
func (p *Prompt) MainText() string { return strings.Join(p.mainLines(), "\n") }

func (p *Prompt) warn(msg string, args ...any) {
	if p.Logger != nil {
		p.Logger.Log(context.Background(), slog.LevelWarn, msg, args...)
	}
}

// ToText renders the whole prompt as one completion-style text:
//
//	user:
//	[CHAT HISTORY]:
//	[user]:ni hao
//
//	[INFO]:
//	I'm a human
//
//	[INPUT]:
//	Hello
//
//	[OUTPUT REQUIREMENT]:
//	Data Format: JSON
//	Data Structure:
//	{
//	  "reply": <str> // your final reply
//	}
//
//	[OUTPUT]:
//	assistant:
//
// The history shows one "[role]:text" line per text part; other parts
// are skipped with a warning to Logger, and the block is left out when no
// text remains. It returns ErrEmptyPrompt when the main prompt is empty.
func (p *Prompt) ToText() (string, error) {
	if p.empty() {
		return "", ErrEmptyPrompt
	}
	lines := []string{"user:"}
	var hist []string
	for i, m := range p.History {
		for j, part := range m.Content {
			if part.Type != llm.PartText {
				p.warn("structured: skipped non-text chat history content in text prompt",
					"message", i, "part", j, "role", string(m.Role), "type", string(part.Type))
				continue
			}
			hist = append(hist, "["+string(m.Role)+"]:"+part.Text)
		}
	}
	if len(hist) > 0 {
		lines = append(lines, "[CHAT HISTORY]:")
		lines = append(lines, hist...)
		lines = append(lines, "")
	}
	lines = append(lines, p.mainLines()...)
	lines = append(lines, "assistant:")
	return strings.Join(lines, "\n"), nil
}

// ToMessages renders the prompt as chat messages: the history (through
// StrictRoleOrders when StrictRoles is set), then one user message holding
// the main prompt (MainText, or just the Input when Input is all there is;
// no message when the main prompt is empty).
//
// With rich false, every history message's content becomes a single text
// part: its text parts joined by a blank line ("\n\n"), other parts
// skipped with a warning to Logger. With rich true, history messages keep
// all their parts. Other message fields (tool calls, reasoning) are kept
// in both modes. p.History is never modified.
func (p *Prompt) ToMessages(rich bool) []llm.Message {
	hist := slices.Clone(p.History)
	if p.StrictRoles {
		hist = StrictRoleOrders(hist)
	}
	if !rich {
		for i, m := range hist {
			var texts []string
			for j, part := range m.Content {
				if part.Type != llm.PartText {
					p.warn("structured: skipped non-text chat history content in plain messages",
						"message", i, "part", j, "role", string(m.Role), "type", string(part.Type))
					continue
				}
				texts = append(texts, part.Text)
			}
			hist[i].Content = []llm.Part{llm.TextPart(strings.Join(texts, "\n\n"))}
		}
	}
	if p.empty() {
		return hist
	}
	text := p.MainText()
	if p.onlyInput() {
		text = render(p.Input)
	}
	return append(hist, llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(text)}})
}

// StrictRoleOrders returns msgs rearranged for providers that require the
// conversation to start with a user turn and alternate roles: consecutive
// messages with the same role are merged (contents and tool calls
// concatenated; tool results are never merged, each answers its own call),
// a user message "[CHAT HISTORY]" is prepended when the first message is
// not from the user, and an assistant message "[User continue input]" is
// appended when the last is not from the assistant, so that the next user
// message alternates. An empty history stays empty. msgs is not modified.
func StrictRoleOrders(msgs []llm.Message) []llm.Message {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]llm.Message, 0, len(msgs)+2)
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Role == m.Role && m.Role != llm.RoleTool {
			last := &out[n-1]
			last.Content = append(slices.Clip(last.Content), m.Content...)
			last.ToolCalls = append(slices.Clip(last.ToolCalls), m.ToolCalls...)
			continue
		}
		out = append(out, m)
	}
	if out[0].Role != llm.RoleUser {
		out = slices.Insert(out, 0, llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(HistoryPlaceholder)}})
	}
	if out[len(out)-1].Role != llm.RoleAssistant {
		out = append(out, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart(ContinuePlaceholder)}})
	}
	return out
}
