package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/sse"
)

// streamEvent is the data of one event. Each event type sets only some
// fields; unknown fields and event types are ignored.
type streamEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage *usage `json:"usage"`
	} `json:"message"` // message_start
	ContentBlock *contentBlock   `json:"content_block"` // content_block_start
	Delta        *eventDelta     `json:"delta"`         // content_block_delta, message_delta
	Usage        *usage          `json:"usage"`         // message_delta
	Error        json.RawMessage `json:"error"`         // error
}

type contentBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`      // text
	Thinking  string `json:"thinking"`  // thinking
	Signature string `json:"signature"` // thinking
	Data      string `json:"data"`      // redacted_thinking
	ID        string `json:"id"`        // tool_use
	Name      string `json:"name"`      // tool_use
}

type eventDelta struct {
	Type        string  `json:"type"`
	Text        string  `json:"text"`         // text_delta
	Thinking    string  `json:"thinking"`     // thinking_delta
	Signature   string  `json:"signature"`    // signature_delta
	PartialJSON string  `json:"partial_json"` // input_json_delta
	StopReason  *string `json:"stop_reason"`  // message_delta
}

// usage is Anthropic's token accounting. message_start carries all of it;
// message_delta carries cumulative counts, at least output_tokens, so the
// latest value of each field wins.
type usage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// merge takes the fields u reports, replacing earlier values.
func (dst *usage) merge(u *usage) {
	if u.InputTokens != nil {
		dst.InputTokens = u.InputTokens
	}
	if u.OutputTokens != nil {
		dst.OutputTokens = u.OutputTokens
	}
	if u.CacheCreationInputTokens != nil {
		dst.CacheCreationInputTokens = u.CacheCreationInputTokens
	}
	if u.CacheReadInputTokens != nil {
		dst.CacheReadInputTokens = u.CacheReadInputTokens
	}
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// toLLM converts u: InputTokens is the whole prompt, cached parts included.
func (u *usage) toLLM() *llm.Usage {
	read, write := val(u.CacheReadInputTokens), val(u.CacheCreationInputTokens)
	return &llm.Usage{
		InputTokens:       val(u.InputTokens) + read + write,
		OutputTokens:      val(u.OutputTokens),
		CachedReadTokens:  read,
		CachedWriteTokens: write,
	}
}

// block is what the decoder tracks of one content block.
type blockState struct {
	typ       string
	stopped   bool
	hasArgs   bool            // tool_use: a non-blank partial_json arrived
	signature strings.Builder // thinking
}

// decoder turns events into llm.Events, accumulating what the finish needs.
type decoder struct {
	s        *stream
	blocks   map[int]*blockState
	usage    usage
	hasUsage bool
	stop     string
	calls    bool // a tool_use block was seen
}

// handle processes one SSE event and reports whether the stream is done.
func (d *decoder) handle(ev sse.Event) (done bool, err error) {
	p := d.s.p
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		return false, nil
	}
	var e streamEvent
	if err := json.Unmarshal(data, &e); err != nil {
		if ev.Name == "error" {
			return false, p.streamError(apiError{Message: string(data)}, d.s.Emitted())
		}
		return false, fmt.Errorf("anthropic: malformed %q event %q: %s",
			ev.Name, llm.Truncate(p.redact(string(data)), 200), err)
	}
	typ := e.Type
	if typ == "" {
		typ = ev.Name
	}
	switch typ {
	case "message_start":
		if e.Message != nil && e.Message.Usage != nil {
			d.usage.merge(e.Message.Usage)
			d.hasUsage = true
		}
	case "content_block_start":
		if e.ContentBlock != nil {
			d.blockStart(e.Index, e.ContentBlock)
		}
	case "content_block_delta":
		if e.Delta != nil {
			d.blockDelta(e.Index, e.Delta)
		}
	case "content_block_stop":
		if b := d.blocks[e.Index]; b != nil {
			d.blockStop(e.Index, b)
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != nil && *e.Delta.StopReason != "" {
			d.stop = *e.Delta.StopReason
		}
		if e.Usage != nil {
			d.usage.merge(e.Usage)
			d.hasUsage = true
		}
	case "message_stop":
		d.finishStream()
		return true, nil
	case "error":
		body := errorBody{Error: e.Error}
		ae, ok := body.parse()
		if !ok {
			ae = apiError{Message: string(data)}
		}
		return false, p.streamError(ae, d.s.Emitted())
	default:
		// "ping" and event types added after this was written.
	}
	return false, nil
}

func (d *decoder) block(index int) *blockState {
	if d.blocks == nil {
		d.blocks = make(map[int]*blockState)
	}
	b := d.blocks[index]
	if b == nil {
		b = &blockState{}
		d.blocks[index] = b
	}
	return b
}

func (d *decoder) blockStart(index int, cb *contentBlock) {
	s := d.s
	b := d.block(index)
	b.typ = cb.Type
	switch cb.Type {
	case "text":
		if cb.Text != "" {
			s.Emit(llm.Event{Kind: llm.EventTextDelta, Text: cb.Text})
		}
	case "thinking":
		if cb.Thinking != "" {
			s.Emit(llm.Event{Kind: llm.EventReasoningDelta, Text: cb.Thinking})
		}
		b.signature.WriteString(cb.Signature)
	case "redacted_thinking":
		if cb.Data != "" {
			s.Emit(llm.Event{Kind: llm.EventRedactedReasoning, Text: cb.Data})
		}
	case "tool_use":
		// The "input":{} here is a placeholder; the input arrives as
		// input_json_delta fragments.
		d.calls = true
		s.Emit(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{
			Index: index, ID: cb.ID, Name: cb.Name,
		}})
	default:
		// server_tool_use, web_search_tool_result...: tools the server runs
		// itself, which this package never offers.
	}
}

func (d *decoder) blockDelta(index int, dl *eventDelta) {
	s := d.s
	switch dl.Type {
	case "text_delta":
		if dl.Text != "" {
			s.Emit(llm.Event{Kind: llm.EventTextDelta, Text: dl.Text})
		}
	case "thinking_delta":
		if dl.Thinking != "" {
			s.Emit(llm.Event{Kind: llm.EventReasoningDelta, Text: dl.Thinking})
		}
	case "signature_delta":
		d.block(index).signature.WriteString(dl.Signature)
	case "input_json_delta":
		b := d.blocks[index]
		if b == nil || b.typ != "tool_use" || dl.PartialJSON == "" {
			return // a server tool's input, or nothing
		}
		if strings.TrimSpace(dl.PartialJSON) != "" {
			b.hasArgs = true
		}
		s.Emit(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{
			Index: index, ArgumentsDelta: dl.PartialJSON,
		}})
	default:
		// citations_delta and delta types added after this was written.
	}
}

// blockStop emits what a finished block completes: a thinking block's
// signature, and "{}" for a tool call without arguments.
func (d *decoder) blockStop(index int, b *blockState) {
	if b.stopped {
		return
	}
	b.stopped = true
	s := d.s
	switch {
	case b.signature.Len() > 0:
		s.Emit(llm.Event{Kind: llm.EventReasoningSignature, Text: b.signature.String()})
	case b.typ == "tool_use" && !b.hasArgs:
		s.Emit(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{
			Index: index, ArgumentsDelta: "{}",
		}})
	}
}

// finishStream completes blocks the server did not stop, then emits the
// usage and the finish.
func (d *decoder) finishStream() {
	s := d.s
	if len(d.blocks) > 0 {
		indexes := make([]int, 0, len(d.blocks))
		for i := range d.blocks {
			indexes = append(indexes, i)
		}
		slices.Sort(indexes)
		for _, i := range indexes {
			d.blockStop(i, d.blocks[i])
		}
	}
	if d.hasUsage {
		if !s.Emit(llm.Event{Kind: llm.EventUsage, Usage: d.usage.toLLM()}) {
			return
		}
	}
	s.Emit(llm.Event{Kind: llm.EventFinish, Finish: finishReason(d.stop, d.calls)})
}

// finishReason maps Anthropic's stop_reason. pause_turn (a long turn of
// server tools paused) is a stop: this package offers no server tools, and
// the agent may simply send the conversation again to continue.
func finishReason(stop string, calls bool) llm.FinishReason {
	switch stop {
	case "end_turn", "stop_sequence", "pause_turn":
		return llm.FinishStop
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "tool_use":
		return llm.FinishToolCalls
	case "refusal":
		return llm.FinishContentFilter
	}
	// None, or a reason added after this was written: the calls decide.
	if calls {
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}
