package tools_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/tools"
)

func TestUpdatePlan(t *testing.T) {
	f := newFixture(t, nil)
	check{has: []string{"Plan updated: 2 entries, 1 completed."}, title: "Update plan"}.verify(t,
		f.call("update_plan", `{"entries":[{"content":"Find it","status":"completed"},{"content":"Fix it","status":"in_progress","priority":"high"}]}`))
	assert.Equal(t, []agent.Plan{{Entries: []agent.PlanEntry{
		{Content: "Find it", Priority: "medium", Status: "completed"},
		{Content: "Fix it", Priority: "high", Status: "in_progress"},
	}}}, f.plans(), "the user is shown the plan, medium priority by default")

	runChecks(t, "update_plan", nil, []check{
		{name: "an empty plan", args: `{"entries":[]}`, has: []string{"Plan cleared."}},
		{name: "two steps in progress", args: `{"entries":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`, err: true,
			has: []string{"2 entries are in_progress; keep exactly one in_progress"}},
		{name: "an unknown status", args: `{"entries":[{"content":"a","status":"done"}]}`, err: true, has: []string{refused, "/entries/0/status"}},
		{name: "an unknown priority", args: `{"entries":[{"content":"a","status":"pending","priority":"urgent"}]}`, err: true, has: []string{refused, "/entries/0/priority"}},
		{name: "an empty step", args: `{"entries":[{"content":"","status":"pending"}]}`, err: true, has: []string{refused, "/entries/0/content"}},
	})
	g := newFixture(t, nil)
	g.call("update_plan", `{"entries":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`)
	assert.Empty(t, g.plans(), "a refused plan is not shown")
}

// Without a form in the editor, the question ends the turn as the
// agent's message; the user's next prompt is the answer.
func TestAskUserWithoutAForm(t *testing.T) {
	f := newFixture(t, nil)
	check{has: []string{"the turn ends here; their next message is the answer"}, title: "Question: Which database?"}.verify(t,
		f.call("ask_user", `{"question":"Which database?","choices":["SQLite","Postgres"],"allow_other":true}`))
	tr := f.s.Transcript()
	last := tr[len(tr)-1]
	assert.Equal(t, agent.EntryAssistant, last.Kind)
	assert.Equal(t, "Which database?\n\n1. SQLite\n2. Postgres\n\n(Or answer in your own words.)", last.Text)
}

// With a form, the tool asks the editor and gives the model the answer.
func TestAskUserInAForm(t *testing.T) {
	var asked []tools.Question
	answers := map[string]tools.Answer{
		"pick":    {Action: tools.AnswerAccept, Values: []string{"Postgres"}},
		"decline": {Action: tools.AnswerDecline},
		"cancel":  {Action: tools.AnswerCancel},
		"empty":   {Action: tools.AnswerAccept},
	}
	f := newFixture(t, nil, func(_ *tools.WorkspaceConfig, e *tools.Editor) {
		e.Ask = func(_ context.Context, q tools.Question) (tools.Answer, error) {
			asked = append(asked, q)
			if q.Text == "broken" {
				return tools.Answer{}, errors.New("no form today")
			}
			return answers[q.Text], nil
		}
	})
	for _, c := range []check{
		{name: "an answer", args: `{"question":"pick","choices":["SQLite","Postgres"],"multi_select":true}`, has: []string{"The user answered: Postgres"}},
		{name: "declined", args: `{"question":"decline"}`, has: []string{"The user declined to answer."}},
		{name: "dismissed", args: `{"question":"cancel"}`, has: []string{"The user dismissed the question without answering."}},
		{name: "submitted empty", args: `{"question":"empty"}`, has: []string{"The user submitted the form without an answer."}},
		{name: "the form fails", args: `{"question":"broken"}`, err: true, has: []string{"the question could not be shown: no form today"}},
		{name: "no question", args: `{"question":""}`, err: true, has: []string{refused, "/question"}},
		{name: "the same choice twice", args: `{"question":"pick","choices":["a","a"]}`, err: true, has: []string{refused, "/choices"}},
		{name: "an empty choice", args: `{"question":"pick","choices":[""]}`, err: true, has: []string{refused, "/choices/0"}},
	} {
		t.Run(c.name, func(t *testing.T) { c.verify(t, f.call("ask_user", c.args)) })
	}
	require.Len(t, asked, 5, "only the valid calls reach the editor")
	assert.Equal(t, tools.Question{ToolCallID: "call1", Text: "pick", Choices: []string{"SQLite", "Postgres"}, MultiSelect: true}, asked[0])
}
