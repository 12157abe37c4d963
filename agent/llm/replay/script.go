package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// The script as written. Every level is decoded strictly on its own, so
// that an error can say which turn and event it is in.
type (
	scriptJSON struct {
		Turns []json.RawMessage `json:"turns"`
	}
	turnJSON struct {
		Match  string            `json:"match"`
		Events []json.RawMessage `json:"events"`
		Finish string            `json:"finish"`
	}
	eventJSON struct {
		Text      *string       `json:"text"`
		Reasoning *string       `json:"reasoning"`
		ToolCall  *toolCallJSON `json:"toolCall"`
		Usage     *usageJSON    `json:"usage"`
		Error     *string       `json:"error"`
		Hang      *bool         `json:"hang"`
		DelayMs   *int64        `json:"delayMs"`
		Repeat    *int          `json:"repeat"`
	}
	toolCallJSON struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	usageJSON struct {
		InputTokens       int64 `json:"inputTokens"`
		OutputTokens      int64 `json:"outputTokens"`
		CachedReadTokens  int64 `json:"cachedReadTokens"`
		CachedWriteTokens int64 `json:"cachedWriteTokens"`
		ReasoningTokens   int64 `json:"reasoningTokens"`
	}
)

// turn is a validated turn, ready to play.
type turn struct {
	match  string
	steps  []step
	finish llm.FinishReason
}

type stepKind uint8

const (
	stepEvent stepKind = iota // emit ev (a ToolCall is copied per emission)
	stepDelay                 // only wait
	stepError
	stepHang
)

// step is one script event: an optional delay, then the action, repeat
// times.
type step struct {
	kind   stepKind
	delay  time.Duration
	repeat int
	ev     llm.Event
	errMsg string
	// autoID is set for a tool call without an id, which gets a fresh one
	// each time it is played.
	autoID bool
}

// maxDelay bounds delayMs so that a typo cannot stall a run for days.
const maxDelay = 10 * time.Minute

// Load reads and parses the script at path.
func Load(path string) (*Provider, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return p, nil
}

// Parse parses a script. It is strict: unknown fields, events with no or
// several actions, and bad values are errors naming the turn and event
// (counted from 0).
func Parse(data []byte) (*Provider, error) {
	var s scriptJSON
	if err := decodeStrict(data, &s); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			// Offset counts the offending byte, so it points just past it.
			line, col := position(data, syn.Offset-1)
			return nil, fmt.Errorf("replay: script: line %d, column %d: %w", line, col, err)
		}
		return nil, fmt.Errorf("replay: script: %w", err)
	}
	if len(s.Turns) == 0 {
		return nil, errors.New(`replay: script: no turns (want {"turns": [...]} with at least one turn)`)
	}
	p := &Provider{}
	for i, raw := range s.Turns {
		t, err := parseTurn(raw)
		if err != nil {
			return nil, fmt.Errorf("replay: turn %d: %w", i, err)
		}
		p.turns = append(p.turns, t)
		if t.match == "" {
			p.sequence = append(p.sequence, len(p.turns)-1)
		}
	}
	return p, nil
}

func parseTurn(raw json.RawMessage) (turn, error) {
	var tj turnJSON
	if err := decodeStrict(raw, &tj); err != nil {
		return turn{}, err
	}
	t := turn{match: tj.Match}
	hasCalls := false
	for j, raw := range tj.Events {
		st, err := parseEvent(raw)
		if err != nil {
			return turn{}, fmt.Errorf("event %d: %w", j, err)
		}
		if st.kind == stepEvent && st.ev.Kind == llm.EventToolCallDelta {
			hasCalls = true
		}
		t.steps = append(t.steps, st)
	}
	switch tj.Finish {
	case "":
		t.finish = llm.FinishStop
		if hasCalls {
			t.finish = llm.FinishToolCalls
		}
	case string(llm.FinishStop), string(llm.FinishLength), string(llm.FinishToolCalls), string(llm.FinishContentFilter):
		t.finish = llm.FinishReason(tj.Finish)
	default:
		return turn{}, fmt.Errorf("finish %q: want stop, length, tool_calls or content_filter", tj.Finish)
	}
	return t, nil
}

func parseEvent(raw json.RawMessage) (step, error) {
	var ej eventJSON
	if err := decodeStrict(raw, &ej); err != nil {
		return step{}, err
	}
	st := step{repeat: 1}
	if ej.DelayMs != nil {
		if *ej.DelayMs < 0 || time.Duration(*ej.DelayMs)*time.Millisecond > maxDelay {
			return step{}, fmt.Errorf("delayMs %d: want 0 to %d", *ej.DelayMs, maxDelay.Milliseconds())
		}
		st.delay = time.Duration(*ej.DelayMs) * time.Millisecond
	}
	var actions []string
	if ej.Text != nil {
		actions = append(actions, "text")
		st.ev = llm.Event{Kind: llm.EventTextDelta, Text: *ej.Text}
	}
	if ej.Reasoning != nil {
		actions = append(actions, "reasoning")
		st.ev = llm.Event{Kind: llm.EventReasoningDelta, Text: *ej.Reasoning}
	}
	if ej.ToolCall != nil {
		actions = append(actions, "toolCall")
		tc, err := parseToolCall(ej.ToolCall)
		if err != nil {
			return step{}, fmt.Errorf("toolCall: %w", err)
		}
		st.ev = llm.Event{Kind: llm.EventToolCallDelta, ToolCall: tc}
		st.autoID = tc.ID == ""
	}
	if ej.Usage != nil {
		actions = append(actions, "usage")
		u := ej.Usage
		st.ev = llm.Event{Kind: llm.EventUsage, Usage: &llm.Usage{
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CachedReadTokens: u.CachedReadTokens, CachedWriteTokens: u.CachedWriteTokens,
			ReasoningTokens: u.ReasoningTokens,
		}}
	}
	if ej.Error != nil {
		actions = append(actions, "error")
		st.kind, st.errMsg = stepError, *ej.Error
		if st.errMsg == "" {
			return step{}, errors.New("error: want a message")
		}
	}
	if ej.Hang != nil {
		actions = append(actions, "hang")
		if !*ej.Hang {
			return step{}, errors.New("hang: the only meaningful value is true")
		}
		st.kind = stepHang
	}
	switch {
	case len(actions) > 1:
		return step{}, fmt.Errorf("%q in one event: want one action per event", actions)
	case len(actions) == 0 && ej.DelayMs == nil:
		return step{}, errors.New("no action: want one of text, reasoning, toolCall, usage, error, hang, delayMs")
	case len(actions) == 0:
		st.kind = stepDelay
	}
	if ej.Repeat != nil {
		if *ej.Repeat < 1 {
			return step{}, fmt.Errorf("repeat %d: want at least 1", *ej.Repeat)
		}
		// Repeating anything else would duplicate call ids or be pointless.
		if st.kind != stepDelay && st.ev.Kind != llm.EventTextDelta && st.ev.Kind != llm.EventReasoningDelta {
			return step{}, fmt.Errorf("repeat: only text, reasoning and delay events may repeat, not %s", actions[0])
		}
		st.repeat = *ej.Repeat
	}
	return st, nil
}

func parseToolCall(tj *toolCallJSON) (*llm.ToolCallDelta, error) {
	if tj.Name == "" {
		return nil, errors.New("want a name")
	}
	args := "{}"
	if raw := bytes.TrimSpace(tj.Arguments); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if raw[0] == '"' {
			// A string is the raw text the model "wrote", possibly invalid
			// JSON, to test how the agent copes with it.
			if err := json.Unmarshal(raw, &args); err != nil {
				return nil, fmt.Errorf("arguments: %w", err)
			}
		} else {
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return nil, fmt.Errorf("arguments: %w", err)
			}
			args = b.String()
		}
	}
	return &llm.ToolCallDelta{ID: tj.ID, Name: tj.Name, ArgumentsDelta: args}, nil
}

// position converts a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	before := data[:min(max(offset, 0), int64(len(data)))]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// decodeStrict decodes exactly one JSON value into v, rejecting unknown
// fields and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if err == io.EOF {
			return errors.New("empty input")
		}
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}
