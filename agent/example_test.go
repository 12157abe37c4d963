package agent_test

import (
	"context"
	"fmt"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm/replay"
)

// Example runs a session in a Go program: a model (here the offline
// replay model, scripted to call a tool and then answer), a typed tool,
// and a subscriber reading the output stream while the prompt runs.
func Example() {
	model, err := replay.Parse([]byte(`{"turns": [
		{"match": "weather", "events": [{"toolCall": {"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}}]},
		{"events": [{"text": "Sunny"}, {"text": " in Paris."}]}
	]}`))
	if err != nil {
		panic(err)
	}
	s := agent.NewSession(agent.SessionConfig{CWD: "/tmp", ModelConfig: agent.ModelConfig{Model: model, ModelName: "demo"}})
	defer s.Close()

	type weatherArgs struct {
		City string `json:"city" jsonschema:"the city" schema:"minLength=1"`
	}
	err = s.Tools().Register(agent.NewTool(agent.TypedTool[weatherArgs]{
		Name: "get_weather", Description: "The weather in a city.",
		Run: func(_ context.Context, a weatherArgs) (agent.ToolResult, error) {
			return agent.ToolResult{Text: "sunny, 24°C in " + a.City}, nil
		},
	}))
	if err != nil {
		panic(err)
	}

	sub := s.Subscribe(64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range sub.C() {
			switch ev.Type {
			case agent.OutputText:
				fmt.Printf("text %q\n", ev.Text)
			case agent.OutputToolCall:
				fmt.Println("tool call", ev.ToolName, ev.Arguments)
			case agent.OutputToolResult:
				fmt.Println("tool result", ev.Text)
			case agent.OutputResult:
				fmt.Println("result", ev.StopReason)
				return
			}
		}
	}()
	res, err := s.Prompt(context.Background(), "What is the weather in Paris?")
	if err != nil {
		panic(err)
	}
	<-done
	fmt.Println("answer:", res.Text)
	// Output:
	// tool call get_weather {"city":"Paris"}
	// tool result sunny, 24°C in Paris
	// text "Sunny"
	// text " in Paris."
	// result end_turn
	// answer: Sunny in Paris.
}
