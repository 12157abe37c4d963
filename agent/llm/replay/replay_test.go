package replay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acp-agent/acp-agent/agent/llm"
)

func collect(p *Provider, ctx context.Context, req *llm.Request) ([]string, error) {
	var got []string
	for ev, err := range p.Stream(ctx, req) {
		if err != nil {
			return got, err
		}
		got = append(got, ev.String())
	}
	return got, nil
}

func mustParse(t testing.TB, script string) *Provider {
	t.Helper()
	p, err := Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userSays(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(text)}}}}
}

func TestParseRejectsBadScripts(t *testing.T) {
	tests := []struct {
		name, script string
		want         string // a substring of the error
	}{
		{"empty input", ``, "empty input"},
		{"syntax error names line and column", "{\"turns\": [\n  {\"events\": [}]}", "line 2, column 15"},
		{"no turns", `{"turns": []}`, "no turns"},
		{"missing turns", `{}`, "no turns"},
		{"unknown top-level field", `{"turns": [{"events": []}], "turn": 1}`, `script: json: unknown field "turn"`},
		{"unknown turn field", `{"turns": [{"events": []}, {"event": []}]}`, `turn 1: json: unknown field "event"`},
		{"unknown event field", `{"turns": [{"events": [{"text": "a"}, {"txt": "b"}]}]}`, `turn 0: event 1: json: unknown field "txt"`},
		{"unknown tool call field", `{"turns": [{"events": [{"toolCall": {"name": "x", "args": {}}}]}]}`, `turn 0: event 0: json: unknown field "args"`},
		{"unknown usage field", `{"turns": [{"events": [{"usage": {"input": 1}}]}]}`, `turn 0: event 0: json: unknown field "input"`},
		{"wrong type", `{"turns": [{"events": [{"text": 5}]}]}`, "turn 0: event 0: json: cannot unmarshal number"},
		{"two actions", `{"turns": [{"events": [{"text": "a", "reasoning": "b"}]}]}`, `turn 0: event 0: ["text" "reasoning"] in one event`},
		{"no action", `{"turns": [{"events": [{"repeat": 2}]}]}`, "turn 0: event 0: no action"},
		{"zero repeat", `{"turns": [{"events": [{"text": "a", "repeat": 0}]}]}`, "turn 0: event 0: repeat 0"},
		{"repeated tool call", `{"turns": [{"events": [{"toolCall": {"name": "x"}, "repeat": 2}]}]}`, "only text, reasoning and delay events may repeat"},
		{"negative delay", `{"turns": [{"events": [{"delayMs": -1}]}]}`, "delayMs -1"},
		{"huge delay", `{"turns": [{"events": [{"delayMs": 86400000}]}]}`, "delayMs 86400000"},
		{"tool call without name", `{"turns": [{"events": [{"toolCall": {"id": "c"}}]}]}`, "turn 0: event 0: toolCall: want a name"},
		{"empty error", `{"turns": [{"events": [{"error": ""}]}]}`, "error: want a message"},
		{"hang false", `{"turns": [{"events": [{"hang": false}]}]}`, "hang:"},
		{"bad finish", `{"turns": [{"events": [], "finish": "end_turn"}, {"events": []}]}`, `turn 0: finish "end_turn"`},
		{"trailing data", `{"turns": [{"events": []}]} {}`, "data after the JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.script))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestStreamPlaysEvents(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name, script string
		want         []string
	}{
		{
			name: "every kind of event in order",
			script: `{"turns": [{"events": [
				{"reasoning": "hmm"},
				{"text": "Hello"},
				{"delayMs": 1},
				{"text": " world", "repeat": 3},
				{"toolCall": {"id": "call_1", "name": "read_file", "arguments": {"path": "/tmp/x"}}},
				{"toolCall": {"id": "call_2", "name": "ls", "arguments": "{\"path\": oops"}},
				{"usage": {"inputTokens": 10, "outputTokens": 5, "cachedReadTokens": 3, "cachedWriteTokens": 2, "reasoningTokens": 1}}
			]}]}`,
			want: []string{
				"reasoning:hmm", "text:Hello", "text: world", "text: world", "text: world",
				`tool:0 id=call_1 name=read_file args={"path":"/tmp/x"}`,
				`tool:1 id=call_2 name=ls args={"path": oops`,
				"usage:in=10 out=5 cr=3 cw=2 r=1",
				"finish:tool_calls",
			},
		},
		{
			name:   "default finish without tool calls is stop",
			script: `{"turns": [{"events": [{"text": "hi"}]}]}`,
			want:   []string{"text:hi", "finish:stop"},
		},
		{
			name:   "explicit finish wins",
			script: `{"turns": [{"events": [{"text": "cut"}], "finish": "length"}]}`,
			want:   []string{"text:cut", "finish:length"},
		},
		{
			name:   "content filter finish",
			script: `{"turns": [{"events": [], "finish": "content_filter"}]}`,
			want:   []string{"finish:content_filter"},
		},
		{
			name:   "missing or null arguments are an empty object",
			script: `{"turns": [{"events": [{"toolCall": {"id": "a", "name": "x"}}, {"toolCall": {"id": "b", "name": "y", "arguments": null}}]}]}`,
			want:   []string{"tool:0 id=a name=x args={}", "tool:1 id=b name=y args={}", "finish:tool_calls"},
		},
		{
			name:   "text with a delay before it",
			script: `{"turns": [{"events": [{"text": "a", "delayMs": 1, "repeat": 2}]}]}`,
			want:   []string{"text:a", "text:a", "finish:stop"},
		},
		{
			name:   "empty text is still emitted",
			script: `{"turns": [{"events": [{"text": ""}]}]}`,
			want:   []string{"text:", "finish:stop"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collect(mustParse(t, tt.script), context.Background(), userSays("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestToolCallWithoutIDGetsFreshIDs(t *testing.T) {
	p := mustParse(t, `{"turns": [{"events": [{"toolCall": {"name": "x"}}]}]}`)
	seen := map[string]bool{}
	for range 3 {
		for ev, err := range p.Stream(context.Background(), userSays("go")) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind != llm.EventToolCallDelta {
				continue
			}
			id := ev.ToolCall.ID
			if !strings.HasPrefix(id, "call_") || seen[id] {
				t.Errorf("id %q: want a fresh call_ id (seen %v)", id, seen)
			}
			seen[id] = true
		}
	}
}

func TestEventsAreCopies(t *testing.T) {
	p := mustParse(t, `{"turns": [{"events": [{"toolCall": {"id": "a", "name": "x"}}, {"usage": {"inputTokens": 1}}]}]}`)
	for ev := range p.Stream(context.Background(), userSays("go")) {
		switch ev.Kind {
		case llm.EventToolCallDelta:
			ev.ToolCall.Name = "changed"
		case llm.EventUsage:
			ev.Usage.InputTokens = 99
		}
	}
	got, _ := collect(p, context.Background(), userSays("go"))
	want := []string{"tool:0 id=a name=x args={}", "usage:in=1 out=0 cr=0 cw=0 r=0", "finish:tool_calls"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("second play = %q, want %q", got, want)
	}
}

func TestTurnSelection(t *testing.T) {
	const script = `{"turns": [
		{"events": [{"text": "first"}]},
		{"match": "weather", "events": [{"text": "sunny"}]},
		{"events": [{"text": "second"}]},
		{"match": "weather in Paris", "events": [{"text": "never: an earlier turn matches"}]},
		{"match": "bench", "events": [{"text": "benchmark"}]}
	]}`
	toolResult := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("weather?")}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "w"}}},
		{Role: llm.RoleTool, ToolCallID: "c", Content: []llm.Part{llm.TextPart("bench")}},
	}}
	lastUserEarlier := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("run the bench")}},
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.TextPart("ok")}},
	}}
	steps := []struct {
		req  *llm.Request
		want string
	}{
		{userSays("hello"), "first"},
		{userSays("what is the weather in Paris?"), "sunny"}, // matches do not advance the sequence
		{userSays("hello again"), "second"},
		{userSays("more"), "first"}, // cycling
		{toolResult, "second"},      // a tool result continues the sequence, whatever it says
		{lastUserEarlier, "benchmark"},
		{&llm.Request{}, "first"},
		{nil, "second"},
	}
	p := mustParse(t, script)
	for i, s := range steps {
		got, err := collect(p, context.Background(), s.req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if len(got) == 0 || got[0] != "text:"+s.want {
			t.Errorf("request %d played %q, want text:%s", i, got, s.want)
		}
	}
}

func TestOnlyMatchedTurnsFailUnmatchedRequests(t *testing.T) {
	p := mustParse(t, `{"turns": [{"match": "x", "events": []}]}`)
	if _, err := collect(p, context.Background(), userSays("y")); err == nil || !strings.Contains(err.Error(), "no turn matches") {
		t.Errorf("err = %v, want no turn matches", err)
	}
	if got, err := collect(p, context.Background(), userSays("x")); err != nil || len(got) != 1 {
		t.Errorf("matching request = %q, %v", got, err)
	}
}

func TestConcurrentStreamsShareTheSequence(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := mustParse(t, `{"turns": [{"events": [{"text": "a"}]}, {"events": [{"text": "b"}]}]}`)
	const n = 64
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			got, err := collect(p, context.Background(), userSays("go"))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			counts[got[0]]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts["text:a"] != n/2 || counts["text:b"] != n/2 {
		t.Errorf("turns played %v, want %d each", counts, n/2)
	}
}

func TestErrorEventFailsTheStream(t *testing.T) {
	p := mustParse(t, `{"turns": [{"events": [{"text": "partial"}, {"error": "model overloaded"}, {"text": "never"}]}]}`)
	got, err := collect(p, context.Background(), userSays("go"))
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Provider != "replay" || pe.Message != "model overloaded" {
		t.Fatalf("err = %#v, want a replay ProviderError", err)
	}
	if !reflect.DeepEqual(got, []string{"text:partial"}) {
		t.Errorf("events = %q", got)
	}
}

func TestCancellation(t *testing.T) {
	defer goleak.VerifyNone(t)
	cause := errors.New("user pressed stop")
	tests := []struct {
		name   string
		script string
		cause  error
		want   error
	}{
		{"hang until cancelled", `{"turns": [{"events": [{"text": "wait"}, {"hang": true}, {"text": "never"}]}]}`, nil, context.Canceled},
		{"hang with a cause", `{"turns": [{"events": [{"text": "wait"}, {"hang": true}]}]}`, cause, cause},
		{"long delay is cut short", `{"turns": [{"events": [{"text": "wait"}, {"delayMs": 600000}, {"text": "never"}]}]}`, nil, context.Canceled},
		{"delay before text is cut short", `{"turns": [{"events": [{"text": "wait"}, {"text": "never", "delayMs": 600000}]}]}`, nil, context.Canceled},
		{"between fast events", `{"turns": [{"events": [{"text": "wait"}, {"text": "never", "repeat": 1000000}]}]}`, nil, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.script)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var got []string
			var err error
			var cancelled time.Time
			for ev, e := range p.Stream(ctx, userSays("go")) {
				if e != nil {
					err = e
					break
				}
				got = append(got, ev.String())
				if len(got) == 1 {
					if tt.name == "between fast events" {
						cancel(tt.cause) // at once: the next event must not come
					} else {
						time.AfterFunc(20*time.Millisecond, func() { cancel(tt.cause) })
					}
					cancelled = time.Now()
				}
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want one wrapping %v", err, tt.want)
			}
			if d := time.Since(cancelled); d > time.Second {
				t.Errorf("stream ended %v after the cancel", d)
			}
			if !reflect.DeepEqual(got, []string{"text:wait"}) {
				t.Errorf("events = %q, want only the first", got)
			}
		})
	}
}

func TestCancelledContextPlaysNothing(t *testing.T) {
	p := mustParse(t, `{"turns": [{"events": [{"text": "a"}]}, {"events": [{"text": "b"}]}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := collect(p, ctx, userSays("go")); !errors.Is(err, context.Canceled) || len(got) != 0 {
		t.Errorf("got %q, %v; want nothing and context.Canceled", got, err)
	}
	// The cancelled request did not use up a turn.
	if got, _ := collect(p, context.Background(), userSays("go")); got[0] != "text:a" {
		t.Errorf("next request played %q, want the first turn", got)
	}
}

func TestBreakStopsPlaying(t *testing.T) {
	p := mustParse(t, `{"turns": [{"events": [{"text": "a", "repeat": 10}]}]}`)
	n := 0
	// range-over-func panics if the iterator yields after a break.
	for range p.Stream(context.Background(), userSays("go")) {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("got %d events", n)
	}
}

func TestDefaultScript(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := Default()
	if p.Name() != "replay" {
		t.Errorf("Name() = %q", p.Name())
	}
	start := time.Now()
	got, err := collect(p, context.Background(), userSays("Refactor main.go please"))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var texts, reasoning int
	for _, s := range got {
		switch {
		case strings.HasPrefix(s, "text:"):
			texts++
			text.WriteString(strings.TrimPrefix(s, "text:"))
		case strings.HasPrefix(s, "reasoning:"):
			reasoning++
		}
	}
	if reasoning == 0 || texts < 10 {
		t.Errorf("got %d reasoning and %d text chunks, want a streamed demo", reasoning, texts)
	}
	for _, want := range []string{"offline replay model", "--model openai/<model>", "OPENAI_API_KEY", "docs/replay-script.md"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("answer lacks %q:\n%s", want, text.String())
		}
	}
	if got[len(got)-1] != "finish:stop" {
		t.Errorf("last event %q", got[len(got)-1])
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("demo took %v; want visible streaming that does not drag", d)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"turns": [{"events": [{"text": "from file"}]}]}`), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"turns": [{"events": [{"text": 1}]}]}`), 0o644)

	p, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := collect(p, context.Background(), userSays("x")); got[0] != "text:from file" {
		t.Errorf("played %q", got)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "turn 0: event 0") || !strings.Contains(err.Error(), bad) {
		t.Errorf("err = %v, want one naming the location and the file", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want os.ErrNotExist", err)
	}
}

// TestDocumentedScriptsParse keeps docs/replay-script.md honest: every JSON
// block in it is a valid script.
func TestDocumentedScriptsParse(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "replay-script.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("no json blocks in the document")
	}
	for i, b := range blocks {
		if _, err := Parse(b[1]); err != nil {
			t.Errorf("block %d: %v\n%s", i, err, b[1])
		}
	}
}

func BenchmarkReplay100kChunks(b *testing.B) {
	const n = 100_000
	p := mustParse(b, fmt.Sprintf(`{"turns": [{"events": [{"text": "tok ", "repeat": %d}]}]}`, n))
	req := userSays("bench")
	b.ReportAllocs()
	for b.Loop() {
		got := 0
		for ev, err := range p.Stream(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == llm.EventTextDelta {
				got++
			}
		}
		if got != n {
			b.Fatalf("got %d chunks, want %d", got, n)
		}
	}
}
