package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/openai"
)

// bigSession returns a session whose transcript has n entries: user and
// assistant messages, tool calls and tool results, each with a payload.
func bigSession(b *testing.B, n int) *agent.Session {
	b.Helper()
	entries := make([]agent.Entry, 0, n)
	for i := 0; len(entries) < n; i++ {
		text := fmt.Sprintf("message %d: %0200d", i, i)
		entries = append(entries,
			agent.UserEntry(text),
			agent.Entry{Kind: agent.EntryToolCalls, ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("c", i), Name: "read_file", Arguments: `{"path":"/x"}`}}},
			agent.Entry{Kind: agent.EntryToolOutput, ToolCallID: fmt.Sprint("c", i), ToolName: "read_file", Text: text},
			agent.AssistantEntry(text),
		)
	}
	s := agent.NewSession(agent.SessionConfig{CWD: "/tmp"})
	if err := s.Resume(entries[:n]); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkFork100kEntries: Fork shares the immutable entries; it copies
// only the slice of pointers and the registry.
func BenchmarkFork100kEntries(b *testing.B) {
	s := bigSession(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		f, err := s.Fork()
		if err != nil {
			b.Fatal(err)
		}
		if f.Stats().TotalEntries != 100_000 {
			b.Fatal("fork lost entries")
		}
	}
}

// BenchmarkForkFromUserEntry100kEntries forks from the middle: the counts
// of the prefix are recomputed.
func BenchmarkForkFromUserEntry100kEntries(b *testing.B) {
	s := bigSession(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ForkFromUserEntry(50_000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStats100kEntries: Stats reads counters kept on append.
func BenchmarkStats100kEntries(b *testing.B) {
	s := bigSession(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		if s.Stats().TotalEntries != 100_000 {
			b.Fatal("wrong count")
		}
	}
}

// instantOpenAI is an OpenAI-compatible server that answers at once:
// requests whose last message is from the user get a tool call, requests
// after a tool result get a short answer.
func instantOpenAI(b *testing.B) *httptest.Server {
	call := []byte("data: " + `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}]}` + "\n\n" +
		"data: " + `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	answer := []byte("data: " + `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Sunny in Paris."},"finish_reason":null}]}` + "\n\n" +
		"data: " + `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if bytes.Contains(body, []byte(`"role":"tool"`)) {
			w.Write(answer)
		} else {
			w.Write(call)
		}
	}))
	b.Cleanup(srv.Close)
	return srv
}

// encodingSink encodes every update to a discarded buffer, as a sink
// that forwards updates would.
type encodingSink struct{}

func (encodingSink) Update(_ context.Context, u agent.Update) error {
	_, err := json.Marshal(u)
	return err
}

// BenchmarkAgentLoopRoundTrip runs prompts of two model round trips each
// (tool call, tool run, answer) against a server that answers at once,
// with schema-checked tool arguments and every update encoded. ns/op is
// per prompt; the roundtrip metric is per model request. Compare with
// BenchmarkProviderRoundTrip, the same requests without the agent loop.
func BenchmarkAgentLoopRoundTrip(b *testing.B) {
	srv := instantOpenAI(b)
	transport := &http.Transport{MaxIdleConnsPerHost: 4}
	b.Cleanup(transport.CloseIdleConnections)
	model := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: &http.Client{Transport: transport}})
	var calls []string
	b.ReportAllocs()
	for b.Loop() {
		s := agent.NewSession(agent.SessionConfig{CWD: "/tmp", ModelConfig: agent.ModelConfig{Model: model, ModelName: "m"}, OutputConfig: agent.OutputConfig{Sink: encodingSink{}}})
		if err := s.Tools().Register(weatherTool(&calls)); err != nil {
			b.Fatal(err)
		}
		res, err := s.Prompt(context.Background(), "Weather in Paris?")
		if err != nil || res.Text != "Sunny in Paris." {
			b.Fatalf("prompt: %q, %v", res.Text, err)
		}
		s.Close()
		calls = calls[:0]
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/roundtrip")
}

// BenchmarkProviderRoundTrip is the baseline of BenchmarkAgentLoopRoundTrip:
// the same two requests and streams, straight through the provider.
func BenchmarkProviderRoundTrip(b *testing.B) {
	srv := instantOpenAI(b)
	transport := &http.Transport{MaxIdleConnsPerHost: 4}
	b.Cleanup(transport.CloseIdleConnections)
	model := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: &http.Client{Transport: transport}})
	tools := []llm.ToolSpec{{Name: "get_weather", Description: "Weather for a city.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}
	first := &llm.Request{Model: "m", System: "You are a test.", Tools: tools,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("Weather in Paris?")}}}}
	second := &llm.Request{Model: "m", System: "You are a test.", Tools: tools, Messages: append(slices.Clone(first.Messages),
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Content: []llm.Part{llm.TextPart("sunny, 21C")}})}
	b.ReportAllocs()
	for b.Loop() {
		for _, req := range []*llm.Request{first, second} {
			for _, err := range model.Stream(context.Background(), req) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/roundtrip")
}
