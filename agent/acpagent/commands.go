package acpagent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/prompts"
	"github.com/acp-agent/acp-agent/policy"
)

// slashCommand is a command the agent handles itself when a prompt starts
// with "/name": it is not sent to the model.
type slashCommand struct {
	name, description, hint string
	// run handles the command with the rest of the line; what it returns
	// is shown to the user as the agent's answer.
	run func(ctx context.Context, a *acpSession, args string) (string, error)
	// prompt, for a command defined in a file (or a skill), is the prompt
	// the command stands for: it goes to the model in the command's place.
	prompt func(args string) (string, error)
}

// sessionCommands are the built-in commands, then the commands and skills
// the session's workspace and the user define in files (a built-in name
// always means the built-in).
func (as *acpSession) sessionCommands() []slashCommand {
	cmds := as.a.slashCommands()
	if as.ws == nil {
		return cmds
	}
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c.name] = true
	}
	lib, _ := as.ws.Prompts()
	for _, fc := range lib.Commands {
		if seen[fc.Name] {
			continue
		}
		seen[fc.Name] = true
		desc := fc.Description
		if desc == "" {
			desc = "Run the prompt in " + filepath.Base(fc.Path)
		}
		cmds = append(cmds, slashCommand{name: fc.Name, description: desc, hint: fc.ArgumentHint,
			prompt: func(args string) (string, error) { return prompts.Expand(fc.Body, args), nil }})
	}
	for _, sk := range lib.Skills {
		if seen[sk.Name] {
			continue
		}
		seen[sk.Name] = true
		desc := sk.Description
		if desc == "" {
			desc = "Use the skill " + sk.Name
		}
		cmds = append(cmds, slashCommand{name: sk.Name, description: desc, hint: "what to use the skill for",
			prompt: func(args string) (string, error) {
				body, err := sk.Body()
				if err != nil {
					return "", fmt.Errorf("reading the skill %s: %w", sk.Name, err)
				}
				p := "Use the skill " + sk.Name + " for this request. Its instructions:\n\n" + body
				if strings.TrimSpace(args) != "" {
					p += "\n\nThe request: " + args
				}
				return p, nil
			}})
	}
	return cmds
}

func (a *Agent) slashCommands() []slashCommand {
	cmds := []slashCommand{
		{name: "clear", description: "Start a new, empty context in this session (the history stays on disk)",
			run: func(ctx context.Context, as *acpSession, _ string) (string, error) {
				as.s.ClearContext()
				return "Context cleared: the next prompt starts a new conversation.", nil
			}},
		{name: "model", description: "Show the models, or switch to one", hint: "model id (e.g. openai/gpt-4.1)",
			run: func(ctx context.Context, as *acpSession, args string) (string, error) {
				return a.modelCommand(as, args)
			}},
		{name: "mode", description: "Show the modes, or switch to one", hint: "read-only | default | accept-edits | full-access",
			run: func(ctx context.Context, as *acpSession, args string) (string, error) {
				return a.modeCommand(as, args)
			}},
		{name: "compact", description: "Summarise the older part of the conversation now, to free context",
			run: func(ctx context.Context, as *acpSession, _ string) (string, error) {
				if err := as.s.Compact(ctx); err != nil {
					return "", err
				}
				return "Compacted: older messages were replaced by a summary.", nil
			}},
		{name: "rewind", description: "Go back to before one of your messages, with the files, or undo the last rewind", hint: "[N [keep-files]] | undo",
			run: func(ctx context.Context, as *acpSession, args string) (string, error) {
				return as.rewindCommand(ctx, args)
			}},
		{name: "cost", description: "Show the session's token usage and cost",
			run: func(ctx context.Context, as *acpSession, _ string) (string, error) {
				return as.s.CostReport(), nil
			}},
	}
	cmds = append(cmds, a.extraCommands...)
	return cmds
}

// availableCommands is the available_commands_update of a session.
func (as *acpSession) availableCommands() *acp.AvailableCommandsUpdate {
	u := &acp.AvailableCommandsUpdate{AvailableCommands: []acp.AvailableCommand{}}
	for _, c := range as.sessionCommands() {
		ac := acp.AvailableCommand{Name: c.name, Description: c.description}
		if c.hint != "" {
			ac.Input = &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: c.hint}}
		}
		u.AvailableCommands = append(u.AvailableCommands, ac)
	}
	return u
}

// parseSlash finds a command at the start of a prompt: "/name args" (the
// arguments are the rest of the text, lines included).
func (as *acpSession) parseSlash(blocks []acp.ContentBlock) (*slashCommand, string) {
	if len(blocks) == 0 || blocks[0].Text == nil {
		return nil, ""
	}
	text := strings.TrimSpace(blocks[0].Text.Text)
	if !strings.HasPrefix(text, "/") {
		return nil, ""
	}
	name, args := text[1:], ""
	if i := strings.IndexAny(name, " \t\n"); i >= 0 {
		name, args = name[:i], name[i+1:]
	}
	for _, c := range as.sessionCommands() {
		if c.name == name {
			return &c, strings.TrimSpace(args)
		}
	}
	return nil, ""
}

func (a *Agent) modelCommand(as *acpSession, args string) (string, error) {
	cur := as.s.CurrentModel()
	if args == "" {
		var b strings.Builder
		b.WriteString("Models (switch with /model ID):\n")
		for _, e := range a.modelEntries() {
			mark := "  "
			if e.choice.Spec == cur.ID {
				mark = "* "
			}
			line := mark + e.choice.Spec
			if e.choice.Name != "" && e.choice.Name != e.choice.Spec {
				line += " — " + e.choice.Name
			}
			if e.err != nil {
				line += " (unavailable)"
			}
			b.WriteString(line + "\n")
		}
		return b.String(), nil
	}
	v := acp.SessionConfigValueId(args)
	opts, err := a.setConfigOption(as, &acp.SetSessionConfigOptionRequest{ConfigID: ConfigOptionModel, Value: acp.SessionConfigOptionValue{ValueID: &v}})
	if err != nil {
		return "", err
	}
	as.post(acp.SessionUpdate{ConfigOptionUpdate: &acp.ConfigOptionUpdate{ConfigOptions: opts}})
	return "Model: " + args, nil
}

func (a *Agent) modeCommand(as *acpSession, args string) (string, error) {
	s := as.s
	if args == "" {
		var b strings.Builder
		b.WriteString("Modes (switch with /mode ID):\n")
		for _, m := range policy.Modes {
			mark := "  "
			if m == s.Mode() {
				mark = "* "
			}
			fmt.Fprintf(&b, "%s%s — %s\n", mark, m, modeInfo[m][1])
		}
		return b.String(), nil
	}
	if err := a.setMode(as, args); err != nil {
		return "", err
	}
	return "Mode: " + args, nil
}

// runSlash queues a slash command in the prompt's place: it runs on the
// session's worker, in order with prompts, and answers like a turn.
func (as *acpSession) runSlash(ctx context.Context, c *slashCommand, args string, finish func(*acp.PromptResponse, error)) error {
	return as.s.Submit(ctx, nil, agent.PromptOptions{
		Behavior: agent.FollowUp,
		Run: func(ctx context.Context) (agent.PromptResult, error) {
			out, err := c.run(ctx, as, args)
			if err != nil {
				out = "/" + c.name + ": " + err.Error()
			}
			as.s.Emit(ctx, agent.Update{Kind: agent.UpdateMessage, Text: out})
			return agent.PromptResult{Text: out, StopReason: agent.StopEndTurn}, nil
		},
		OnComplete: func(res agent.PromptResult, err error) {
			if err != nil {
				finish(&acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil)
				return
			}
			finish(&acp.PromptResponse{StopReason: acp.StopReason(res.StopReason)}, nil)
		},
	})
}
