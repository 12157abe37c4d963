package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/openai"
)

func Example() {
	// A stand-in for an OpenAI-compatible server such as Ollama.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Hi!"},"finish_reason":"stop"}]}`+"\n\n"+
			`data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2}}`+"\n\n"+
			"data: [DONE]\n\n")
	}))
	defer srv.Close()

	p := openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "ollama"})
	req := &llm.Request{
		Model:    "qwen3",
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
