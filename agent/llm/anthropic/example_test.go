package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/anthropic"
)

func Example() {
	// A stand-in for api.anthropic.com.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\n"+
			`data: {"type":"message_start","message":{"usage":{"input_tokens":9,"cache_read_input_tokens":0,"output_tokens":1}}}`+"\n\n"+
			"event: content_block_start\n"+
			`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`+"\n\n"+
			"event: content_block_delta\n"+
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi!"}}`+"\n\n"+
			"event: content_block_stop\n"+
			`data: {"type":"content_block_stop","index":0}`+"\n\n"+
			"event: message_delta\n"+
			`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`+"\n\n"+
			"event: message_stop\n"+
			`data: {"type":"message_stop"}`+"\n\n")
	}))
	defer srv.Close()

	p := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "sk-ant-example"})
	req := &llm.Request{
		Model:    "claude-sonnet-4-5",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("Hello")}}},
	}
	for ev, err := range p.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Kind {
		case llm.EventTextDelta:
			fmt.Println("text:", ev.Text)
		case llm.EventUsage:
			fmt.Println("tokens:", ev.Usage.InputTokens, ev.Usage.OutputTokens)
		case llm.EventFinish:
			fmt.Println("finish:", ev.Finish)
		}
	}
	// Output:
	// text: Hi!
	// tokens: 9 2
	// finish: stop
}
