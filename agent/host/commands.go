package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/prompts"
	"github.com/acp-agent/acp-agent/policy"
)

// Command is a slash command of a session: a prompt that starts with
// "/name" runs it instead of going to the model as it is.
type Command struct {
	Name, Description string
	// Hint describes the arguments, if it takes any.
	Hint string
	c    slashCommand
}

// Runs reports whether the host runs the command itself (RunCommand);
// otherwise it stands for a prompt (Expand), a command or skill defined
// in a file.
func (c *Command) Runs() bool { return c.c.run != nil }

// Expand is the prompt a file-defined command stands for, given its
// arguments: it goes to the model in the command's place.
func (c *Command) Expand(args string) (string, error) {
	if c.c.prompt == nil {
		return "", fmt.Errorf("/%s is not a prompt", c.Name)
	}
	return c.c.prompt(args)
}

// slashCommand is a command the host handles itself when a prompt starts
// with "/name": it is not sent to the model.
type slashCommand struct {
	name, description, hint string
	// run handles the command with the rest of the line; what it returns
	// is shown to the user as the agent's answer.
	run func(ctx context.Context, s *Session, args string) (string, error)
	// prompt, for a command defined in a file (or a skill), is the prompt
	// the command stands for: it goes to the model in the command's place.
	prompt func(args string) (string, error)
}

// sessionCommands are the built-in commands, then the commands and skills
// the session's workspace and the user define in files (a built-in name
// always means the built-in).
func (s *Session) sessionCommands() []slashCommand {
	cmds := s.h.slashCommands()
	if s.ws == nil {
		return cmds
	}
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c.name] = true
	}
	lib := s.ws.Prompts()
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

func (h *Host) slashCommands() []slashCommand {
	cmds := []slashCommand{
		{name: "clear", description: "Start a new, empty context in this session (the history stays on disk)",
			run: func(ctx context.Context, s *Session, _ string) (string, error) {
				hadPlan := !s.s.Plan().Empty()
				s.s.ClearContext()
				if hadPlan {
					// The plan went with the context: the client drops it.
					s.post(agent.Update{Kind: agent.UpdatePlan, Plan: &agent.Plan{}})
				}
				return "Context cleared: the next prompt starts a new conversation.", nil
			}},
		{name: "model", description: "Show the models, or switch to one", hint: "model id (e.g. openai/gpt-4.1)",
			run: func(ctx context.Context, s *Session, args string) (string, error) {
				return h.modelCommand(s, args)
			}},
		{name: "mode", description: "Show the modes, or switch to one", hint: "read-only | default | accept-edits | full-access",
			run: func(ctx context.Context, s *Session, args string) (string, error) {
				return h.modeCommand(s, args)
			}},
		{name: "compact", description: "Summarise the older part of the conversation now, to free context",
			run: func(ctx context.Context, s *Session, _ string) (string, error) {
				if err := s.s.Compact(ctx); err != nil {
					return "", err
				}
				if s.j != nil {
					// The compacted file is durable before the answer says
					// so; if not, it is held and written later.
					if err := s.j.Sync(); err != nil {
						return "", err
					}
				}
				return "Compacted: older messages were replaced by a summary.", nil
			}},
		{name: "rewind", description: "Go back to before one of your messages, with the files, or undo the last rewind", hint: "[N [keep-files]] | undo",
			run: func(ctx context.Context, s *Session, args string) (string, error) {
				return s.rewindCommand(ctx, args)
			}},
		{name: "cost", description: "Show the session's token usage and cost",
			run: func(ctx context.Context, s *Session, _ string) (string, error) {
				return s.s.CostReport(), nil
			}},
	}
	cmds = append(cmds, h.extraCommands...)
	return cmds
}

// Commands are the session's slash commands: the built-in ones, then
// those its workspace and the user define in files.
func (s *Session) Commands() []Command {
	var out []Command
	for _, c := range s.sessionCommands() {
		out = append(out, Command{Name: c.name, Description: c.description, Hint: c.hint, c: c})
	}
	return out
}

// refreshCommands looks at the command and skill files now and tells
// the client the session's commands again if they changed since the
// session last had them.
func (s *Session) refreshCommands() {
	if s.ws != nil && s.ws.RefreshPrompts() {
		s.c.CommandsChanged(s.Commands())
	}
}

// commandsChanged is the workspace's OnPromptsChanged: the look a turn
// made found the files changed.
func (s *Session) commandsChanged() { s.c.CommandsChanged(s.Commands()) }

// PromptCommand is what a user's prompt starting with text asks for:
// the command it names ("/name args"; the arguments are the rest of the
// text, lines included), or nil for a prompt that goes to the model. The
// command and skill files are looked at again for every prompt, and the
// client told the commands again when they changed: for a prompt naming
// a command that is not built in, now (a command file just added or
// edited is found); for any other, when its turn starts, on the
// session's worker, where the sessions of a workspace share one look at
// the directories (tools.Workspace.PromptArrived), not on the connection
// that brought the prompt.
func (s *Session) PromptCommand(text string) (*Command, string) {
	if s.ws != nil {
		s.ws.PromptArrived()
	}
	name, args, ok := commandName(text)
	if !ok {
		return nil, ""
	}
	// A built-in name always means the built-in: no file can change it.
	for _, c := range s.h.slashCommands() {
		if c.name == name {
			return &Command{Name: c.name, Description: c.description, Hint: c.hint, c: c}, args
		}
	}
	s.refreshCommands()
	return s.Command(text)
}

// Command finds the command text starts with: "/name args" (the
// arguments are the rest of the text, lines included); nil when text is
// not a command of the session. The files are not looked at again
// (PromptCommand does).
func (s *Session) Command(text string) (*Command, string) {
	name, args, ok := commandName(text)
	if !ok {
		return nil, ""
	}
	for _, c := range s.Commands() {
		if c.Name == name {
			return &c, args
		}
	}
	return nil, ""
}

// commandName splits "/name args" (leading and trailing space ignored);
// ok is false when text does not start with "/".
func commandName(text string) (name, args string, ok bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	name = text[1:]
	if i := strings.IndexAny(name, " \t\n"); i >= 0 {
		name, args = name[:i], name[i+1:]
	}
	return name, strings.TrimSpace(args), true
}

func (h *Host) modelCommand(s *Session, args string) (string, error) {
	cur := s.s.CurrentModel()
	if args == "" {
		var b strings.Builder
		b.WriteString("Models (switch with /model ID):\n")
		for _, e := range h.modelEntries() {
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
	opts, err := s.SetOption(OptionModel, args)
	if err != nil {
		return "", err
	}
	s.c.OptionsChanged(opts)
	return "Model: " + args, nil
}

func (h *Host) modeCommand(s *Session, args string) (string, error) {
	if args == "" {
		var b strings.Builder
		b.WriteString("Modes (switch with /mode ID):\n")
		for _, m := range policy.Modes {
			mark := "  "
			if m == s.s.Mode() {
				mark = "* "
			}
			fmt.Fprintf(&b, "%s%s — %s\n", mark, m, modeInfo(m)[1])
		}
		return b.String(), nil
	}
	if err := s.SetMode(args); err != nil {
		return "", err
	}
	return "Mode: " + args, nil
}

// RunCommand queues a command the host runs (Runs) in a prompt's place:
// it runs on the session's worker, in order with prompts, shows its
// answer as the agent's message, and completes like a turn
// (onComplete).
func (s *Session) RunCommand(ctx context.Context, c *Command, args string, onComplete func(agent.PromptResult, error)) error {
	if !c.Runs() {
		return fmt.Errorf("%w: /%s is not a command the host runs", ErrInvalidParams, c.Name)
	}
	return s.s.Submit(ctx, nil, agent.PromptOptions{
		Behavior: agent.FollowUp,
		Run: func(ctx context.Context) (agent.PromptResult, error) {
			if s.ws != nil {
				// What a turn would look at first (PromptCommand).
				s.ws.TurnStarts()
			}
			out, err := c.c.run(ctx, s, args)
			if pe, ok := errors.AsType[*ParamError](err); ok {
				// A person reads it: what was wrong, not the field.
				out = "/" + c.Name + ": " + pe.Reason.Error()
			} else if err != nil {
				out = "/" + c.Name + ": " + err.Error()
			}
			s.s.Emit(ctx, agent.Update{Kind: agent.UpdateMessage, Text: out})
			return agent.PromptResult{Text: out, StopReason: agent.StopEndTurn}, nil
		},
		OnComplete: onComplete,
	})
}
