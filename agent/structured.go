package agent

import (
	"context"
	"strings"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/structured"
)

// Structured answers prompt with a value matching output (a JSON Schema):
// the model is asked with seed 004's prompt layout (output format json),
// its answer is parsed while it streams (each completed value is sent as
// an agent_message_chunk whose _meta names its JSON path), and the result
// is coerced and validated. The exchange joins the transcript.
func (s *Session) Structured(ctx context.Context, prompt string, output *structured.Node, onEvent func(structured.Event)) (any, error) {
	return s.structured(ctx, prompt, output, onEvent, true)
}

// structured is Structured; record says whether the exchange joins the
// transcript (the agent's own questions, such as titles, do not).
func (s *Session) structured(ctx context.Context, prompt string, output *structured.Node, onEvent func(structured.Event), record bool) (any, error) {
	om, err := structured.NewOutputModel(output)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	history := s.tr.messages()
	s.mu.Unlock()
	p := structured.Prompt{Input: prompt, Output: output}
	main, err := p.ToText()
	if err != nil {
		return nil, err
	}
	model := s.CurrentModel()
	msgs := append(history, llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(main)}})
	parser := structured.NewParser(structured.WithMode(structured.EmitComplete), structured.WithHandler(onEvent))
	var text strings.Builder
	for ev, err := range s.cfg.Retry.withRetries(ctx, model.Model, &llm.Request{Model: model.Name, System: s.systemPrompt(), Messages: msgs}, s.onRetry) {
		if err != nil {
			return nil, err
		}
		if ev.Kind == llm.EventTextDelta {
			text.WriteString(ev.Text)
			// A parse error is reported by Parse below, with the path.
			_, _ = parser.WriteString(ev.Text)
		}
	}
	_ = parser.Close()
	if record {
		s.appendEntry(Entry{Kind: EntryUser, Content: []llm.Part{llm.TextPart(prompt)}, Source: "structured"})
		s.appendEntry(Entry{Kind: EntryAssistant, Content: textContent(text.String())})
	}
	return om.Parse(text.String())
}

// titleOutput is what the model is asked for to title a session.
var titleOutput = structured.Object(structured.Req("title", structured.String("a title of at most 8 words for this conversation, no quotes")))

// titleFromModel asks the model for a title of the conversation so far
// (structured output) and gives it to the session: the header and the
// client (session_info_update). Failures are logged; the first-line title
// stays.
func (s *Session) titleFromModel(ctx context.Context) {
	v, err := s.structured(ctx, "Give this conversation a short title.", titleOutput, nil, false)
	if err != nil {
		s.log.Warn("asking the model for a session title", "error", err)
		return
	}
	title, _ := v.(map[string]any)["title"].(string)
	title = strings.TrimSpace(title)
	if title == "" {
		return
	}
	if r := []rune(title); len(r) > 80 {
		title = string(r[:79]) + "…"
	}
	s.mu.Lock()
	if s.cfg.TitleByUser { // set while the model was asked
		s.mu.Unlock()
		return
	}
	s.cfg.Title = title
	s.mu.Unlock()
	if j := s.cfg.Journal; j != nil {
		j.SetTitle(title, true) // keeps a title the user set meanwhile
	}
	if s.titledByUser() {
		return // the user's title came while it was stored: the client has it
	}
	s.update(ctx, Update{Kind: UpdateTitle, Title: &TitleChange{Title: title}})
}
