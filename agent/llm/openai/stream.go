package openai

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/sse"
)

// chunk is one "data:" payload. Pointer fields tell "absent" from empty,
// which the quirks need; unknown fields (obfuscation, service_tier,
// system_fingerprint, reasoning_details...) are ignored.
type chunk struct {
	errorBody
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage"`
}

type choice struct {
	Index        int     `json:"index"`
	Delta        *delta  `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Content          *string         `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
	ToolCalls        []toolCallChunk `json:"tool_calls"`
}

type toolCallChunk struct {
	Index    *int    `json:"index"`
	ID       *string `json:"id"`
	Function *struct {
		Name      *string `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	// DeepSeek reports cache hits here instead of prompt_tokens_details.
	PromptCacheHitTokens *int64 `json:"prompt_cache_hit_tokens"`
}

// callKey identifies a tool call as the server numbers it: by its index,
// or by its position in the chunk when the index is missing.
type callKey struct {
	n          int
	positional bool
}

// call is what the decoder tracks of one tool call.
type call struct {
	id      string
	hasArgs bool
}

// decoder turns chunks into events, accumulating what the finish needs.
type decoder struct {
	s      *stream
	finish string     // last finish_reason seen
	usage  *llm.Usage // last usage seen; servers with continuous usage send many
	calls  []call     // by emitted Index
	byKey  map[callKey]int
}

var doneData = []byte("[DONE]")

// handle processes one SSE event and reports whether the stream is done.
func (d *decoder) handle(ev sse.Event) (done bool, err error) {
	p := d.s.p
	data := bytes.TrimSpace(ev.Data)
	if bytes.Equal(data, doneData) {
		d.finishStream()
		return true, nil
	}
	if len(data) == 0 {
		return false, nil
	}
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		if ev.Name == "error" {
			return false, p.streamError(apiError{Message: string(data)}, d.s.Emitted())
		}
		return false, fmt.Errorf("openai: malformed chunk %q: %s", llm.Truncate(p.redact(string(data)), 200), err)
	}
	if e, ok := c.parse(); ok {
		return false, p.streamError(e, d.s.Emitted())
	}
	if ev.Name == "error" {
		return false, p.streamError(apiError{Message: string(data)}, d.s.Emitted())
	}
	if c.Usage != nil {
		d.usage = c.Usage.toLLM()
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only one completion is requested
		}
		if ch.Delta != nil && !d.delta(ch.Delta) {
			return false, nil
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			switch *ch.FinishReason {
			case "error":
				return false, p.streamError(apiError{Message: `the server ended the stream with finish_reason "error"`}, d.s.Emitted())
			case "insufficient_system_resource":
				// DeepSeek: the server cut generation short for lack of capacity.
				return false, p.streamError(apiError{
					Type:    "insufficient_system_resource",
					Message: "the server stopped generating for lack of resources",
				}, true)
			}
			d.finish = *ch.FinishReason
		}
	}
	return false, nil
}

// delta emits the events of one choice delta and reports whether the
// consumer wants more.
func (d *decoder) delta(dl *delta) bool {
	s := d.s
	reasoning := dl.ReasoningContent
	if reasoning == nil || *reasoning == "" {
		reasoning = dl.Reasoning
	}
	if reasoning != nil && *reasoning != "" {
		if !s.Emit(llm.Event{Kind: llm.EventReasoningDelta, Text: *reasoning}) {
			return false
		}
	}
	if dl.Content != nil && *dl.Content != "" {
		if !s.Emit(llm.Event{Kind: llm.EventTextDelta, Text: *dl.Content}) {
			return false
		}
	}
	for pos, tc := range dl.ToolCalls {
		var id, name, args string
		if tc.ID != nil {
			id = *tc.ID
		}
		if f := tc.Function; f != nil {
			if f.Name != nil {
				name = *f.Name
			}
			if f.Arguments != nil {
				args = *f.Arguments
			}
		}
		key := callKey{n: pos, positional: true}
		if tc.Index != nil {
			key = callKey{n: *tc.Index}
		}
		idx, known := d.byKey[key]
		// A known key with a different id is a new call: Ollama numbers
		// parallel calls all 0, and old Ollama sends no index at all.
		if !known || (id != "" && d.calls[idx].id != "" && d.calls[idx].id != id) {
			if d.byKey == nil {
				d.byKey = make(map[callKey]int)
			}
			idx = len(d.calls)
			d.calls = append(d.calls, call{})
			d.byKey[key] = idx
		} else if id == "" && name == "" && args == "" {
			continue // nothing new, e.g. LM Studio's empty fragments
		}
		c := &d.calls[idx]
		if id != "" {
			c.id = id
		}
		if args != "" {
			c.hasArgs = true
		}
		ev := &llm.ToolCallDelta{Index: idx, ID: id, Name: name, ArgumentsDelta: args}
		if !s.Emit(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: ev}) {
			return false
		}
	}
	return true
}

// finishStream emits what [DONE] completes: ids for calls that had none,
// "{}" for calls without arguments, the usage, and the finish.
func (d *decoder) finishStream() {
	s := d.s
	for i, c := range d.calls {
		if c.id != "" && c.hasArgs {
			continue
		}
		tcd := &llm.ToolCallDelta{Index: i}
		if c.id == "" {
			// Some servers omit ids, but tool results must name one, and
			// the agent needs them unique across turns, not just here.
			tcd.ID = "call_" + rand.Text()[:16]
		}
		if !c.hasArgs {
			tcd.ArgumentsDelta = "{}" // a tool without parameters
		}
		if !s.Emit(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: tcd}) {
			return
		}
	}
	if d.usage != nil {
		if !s.Emit(llm.Event{Kind: llm.EventUsage, Usage: d.usage}) {
			return
		}
	}
	s.Emit(llm.Event{Kind: llm.EventFinish, Finish: d.finishReason()})
}

func (d *decoder) finishReason() llm.FinishReason {
	switch d.finish {
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishContentFilter
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	}
	// "stop", none, or a server's own word ("eos", "end_turn"): some
	// servers say "stop" after tool calls, so the calls decide.
	if len(d.calls) > 0 {
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}

func (u *usage) toLLM() *llm.Usage {
	out := &llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedReadTokens = u.PromptTokensDetails.CachedTokens
	} else if u.PromptCacheHitTokens != nil {
		out.CachedReadTokens = *u.PromptCacheHitTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}
