package agent

import (
	"context"

	"github.com/acp-agent/acp-agent/policy"
)

// Workspace is the environment a session's built-in tools work in
// (package agent/tools has one). The session registers its tools,
// describes it in the system prompt, asks it how commands are confined,
// and closes it on Close.
type Workspace interface {
	// Tools are the tools working in it.
	Tools() []Tool
	// Describe is the system prompt's paragraph about it in mode.
	Describe(mode policy.Mode) string
	// SandboxMissing says why its commands cannot be confined although a
	// sandbox was asked for ("" when they are, or none was asked for):
	// every command then asks, and the session says so once.
	SandboxMissing() string
	// SandboxAutoApproves reports whether confined commands run without
	// asking in mode (the sandbox is the boundary, not the user).
	SandboxAutoApproves(mode policy.Mode) bool
	Close() error
}

// noticer is a Workspace with something to tell the user (a rules file
// cut, left out or refused): Notices returns each thing once.
type noticer interface {
	Notices() []string
}

// turnStarter is a Workspace that looks at something again when a turn
// starts, before its notices and the model's request (the command and
// skill files, for a prompt that arrived since it last looked).
type turnStarter interface {
	TurnStarts()
}

// workspaceNotices is the workspace's part of a turn's start: it is told
// the turn starts (turnStarter), then what it has to say goes to the
// user as a note in the conversation (every client shows agent
// messages).
func (s *Session) workspaceNotices(ctx context.Context) {
	if ts, ok := s.cfg.Workspace.(turnStarter); ok {
		ts.TurnStarts()
	}
	n, ok := s.cfg.Workspace.(noticer)
	if !ok {
		return
	}
	for _, t := range n.Notices() {
		s.update(ctx, Update{Kind: UpdateMessage, Text: "Note: " + t + "\n\n"})
	}
}
