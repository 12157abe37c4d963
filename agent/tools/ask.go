package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/policy"
)

// Question is what ask_user asks the user: a question, and optionally
// the choices to pick from (one, or several with MultiSelect), with
// AllowOther adding a free answer beside them.
type Question struct {
	ToolCallID  string
	Text        string
	Choices     []string
	MultiSelect bool
	AllowOther  bool
}

// Answer is the user's answer: Action "accept" with Values (the text or
// the choices picked, and the free answer), "decline" or "cancel".
type Answer struct {
	Action string
	Values []string
}

// Answer actions.
const (
	AnswerAccept  = "accept"
	AnswerDecline = "decline"
	AnswerCancel  = "cancel"
)

type askArgs struct {
	Question    string   `json:"question" schema:"minLength=1,maxLength=2000"`
	Choices     []string `json:"choices,omitempty" schema:"maxItems=20,uniqueItems,items.minLength=1,items.maxLength=200"`
	MultiSelect bool     `json:"multi_select,omitempty" jsonschema:"with choices: the user may pick several"`
	AllowOther  bool     `json:"allow_other,omitempty" jsonschema:"with choices: the user may also write an answer of their own"`
}

// askUserTool asks the user a question instead of guessing: in a form the
// editor shows, when it offers one (the answer, a decline or a cancel
// goes back to the model), and otherwise as the agent's message that ends
// the turn, so the user's next prompt is the answer.
func (w *Workspace) askUserTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[askArgs]{
		Name: ToolAskUser,
		Description: "Ask the user a question when you need a decision or information only they have, instead of guessing. " +
			"Give choices when the answer is one of a few options (multi_select for several, allow_other for a free answer too). " +
			"Returns the answer; if the user cannot be asked in a form, the turn ends with your question and their next message is the answer.\n" +
			`Example: {"question": "Which database should the tests use?", "choices": ["SQLite in memory", "the Postgres of docker-compose.yml"]}`,
		ShortDescription: "Ask the user a question",
		Describe: func(a askArgs) (agent.ToolCallInfo, error) {
			return agent.ToolCallInfo{Kind: agent.ToolKindOther, Title: "Question: " + oneLine(a.Question, 120), Action: policy.ActionRead}, nil
		},
		Run: func(ctx context.Context, a askArgs) (agent.ToolResult, error) {
			q := Question{ToolCallID: agent.RunningToolCallID(ctx), Text: strings.TrimSpace(a.Question), Choices: a.Choices,
				MultiSelect: a.MultiSelect && len(a.Choices) > 0, AllowOther: a.AllowOther && len(a.Choices) > 0}
			if w.ask == nil {
				return agent.ToolResult{
					Text:    "The question was shown to the user and the turn ends here; their next message is the answer.",
					EndTurn: questionText(q),
				}, nil
			}
			ans, err := w.ask(ctx, q)
			if err != nil {
				if ctx.Err() != nil {
					return agent.ToolResult{}, context.Cause(ctx)
				}
				return agent.ToolResult{}, fmt.Errorf("the question could not be shown: %w", err)
			}
			switch ans.Action {
			case AnswerAccept:
				if len(ans.Values) == 0 {
					return agent.ToolResult{Text: "The user submitted the form without an answer."}, nil
				}
				return agent.ToolResult{Text: "The user answered: " + strings.Join(ans.Values, "; ")}, nil
			case AnswerDecline:
				return agent.ToolResult{Text: "The user declined to answer. Go on without it, or ask differently."}, nil
			}
			return agent.ToolResult{Text: "The user dismissed the question without answering."}, nil
		},
	})
}

// questionText is the question as the agent's message, choices listed.
func questionText(q Question) string {
	var b strings.Builder
	b.WriteString(q.Text)
	if len(q.Choices) > 0 {
		b.WriteString("\n")
		for i, c := range q.Choices {
			fmt.Fprintf(&b, "\n%d. %s", i+1, c)
		}
		if q.MultiSelect {
			b.WriteString("\n\n(Several may be chosen.)")
		}
		if q.AllowOther {
			b.WriteString("\n\n(Or answer in your own words.)")
		}
	}
	return b.String()
}

// oneLine is s on one line, cut to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
