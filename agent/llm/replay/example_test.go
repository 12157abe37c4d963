package replay_test

import (
	"context"
	"fmt"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/replay"
)

func Example() {
	p, err := replay.Parse([]byte(`{"turns": [
		{"match": "weather", "events": [
			{"toolCall": {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}}
		]},
		{"events": [{"text": "Sunny"}, {"text": ", 24°C."}]}
	]}`))
	if err != nil {
		panic(err)
	}
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("What is the weather in Paris?")}},
	}}
	for ev, err := range p.Stream(context.Background(), req) {
		if err != nil {
			panic(err)
		}
		switch ev.Kind {
		case llm.EventToolCallDelta:
			fmt.Printf("call %s %s\n", ev.ToolCall.Name, ev.ToolCall.ArgumentsDelta)
		case llm.EventFinish:
			fmt.Println("finish:", ev.Finish)
		}
	}
	// Output:
	// call get_weather {"city":"Paris"}
	// finish: tool_calls
}
