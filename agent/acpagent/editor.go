package acpagent

import (
	"context"
	"strings"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/runtime"
)

// editorOf is what the client offers the built-in tools: the fs/* methods
// and terminals it advertised, through its connection.
func editorOf(client *acp.ClientConn, sessionID string) tools.Editor {
	caps := client.Capabilities()
	var e tools.Editor
	if caps.FS.ReadTextFile {
		e.Reads = func(local *runtime.LocalFS) tools.TextFiles { return NewClientFS(client, sessionID, local) }
	}
	if caps.FS.WriteTextFile {
		e.Writes = func(local *runtime.LocalFS) tools.TextFiles { return NewClientFS(client, sessionID, local) }
	}
	if caps.Terminal {
		e.Terminal = NewClientTerminal(client, sessionID)
	}
	if caps.Elicitation != nil && caps.Elicitation.Form != nil {
		e.Ask = func(ctx context.Context, q tools.Question) (tools.Answer, error) {
			return askForm(ctx, client, sessionID, q)
		}
	}
	return e
}

// maxAnswerRunes caps one value of a form answer given to the model.
const maxAnswerRunes = 4000

// askForm asks q with elicitation/create in form mode, tied to the session
// and the tool call: a schema with one "answer" field (free text, one of
// the choices, or several of them) and, with AllowOther, an "other" text.
// Cancelling ctx (the turn) cancels the request.
func askForm(ctx context.Context, client *acp.ClientConn, sessionID string, q tools.Question) (tools.Answer, error) {
	answer := acp.ElicitationPropertySchema{String: &acp.StringPropertySchema{Title: "Answer"}}
	switch {
	case q.MultiSelect:
		answer = acp.ElicitationPropertySchema{Array: &acp.MultiSelectPropertySchema{Title: "Choose",
			Items: acp.MultiSelectItems{String: &acp.StringMultiSelectItems{Enum: q.Choices}}}}
	case len(q.Choices) > 0:
		answer = acp.ElicitationPropertySchema{String: &acp.StringPropertySchema{Title: "Choose", Enum: q.Choices}}
	}
	schema := acp.ElicitationSchema{Type: "object", Properties: map[string]acp.ElicitationPropertySchema{"answer": answer}}
	if q.AllowOther {
		schema.Properties["other"] = acp.ElicitationPropertySchema{String: &acp.StringPropertySchema{Title: "Other", Description: "An answer of your own"}}
	} else {
		schema.Required = []string{"answer"}
	}
	req := acp.CreateElicitationRequest{Message: q.Text, Form: &acp.ElicitationFormMode{
		Scope:           acp.ElicitationScope{Session: &acp.ElicitationSessionScope{SessionID: sessionID, ToolCallID: q.ToolCallID}},
		RequestedSchema: schema,
	}}
	var resp acp.CreateElicitationResponse
	if err := client.Call(ctx, acp.MethodElicitationCreate, &req, &resp); err != nil {
		return tools.Answer{}, err
	}
	switch resp.Action {
	case acp.ElicitationActionAccept:
	case acp.ElicitationActionDecline:
		return tools.Answer{Action: tools.AnswerDecline}, nil
	default: // cancel, or an action this agent does not know
		return tools.Answer{Action: tools.AnswerCancel}, nil
	}
	var values []string
	for _, key := range []string{"answer", "other"} {
		v, ok := resp.Content[key]
		switch {
		case !ok:
		case v.String != nil && strings.TrimSpace(*v.String) != "":
			values = append(values, *v.String)
		case v.Strings != nil:
			values = append(values, v.Strings...)
		}
	}
	for i, v := range values {
		if r := []rune(v); len(r) > maxAnswerRunes {
			values[i] = string(r[:maxAnswerRunes]) + "…"
		}
	}
	return tools.Answer{Action: tools.AnswerAccept, Values: values}, nil
}
