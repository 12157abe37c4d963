package acpagent

import (
	"encoding/json"

	"github.com/acp-agent/acp-agent/acp"
)

// TerminalLogin is the terminal set-up a client may run (Config).
type TerminalLogin struct {
	Args    []string
	Command string
}

// terminalLoginID is the terminal auth method's id.
const terminalLoginID = "login"

// terminalLogin is the terminal auth method for req's client, or nil
// when there is none or the client cannot run one.
func (a *Agent) terminalLogin(req *acp.InitializeRequest) *acp.AuthMethod {
	l := a.opts.TerminalLogin
	if l == nil || req == nil {
		return nil
	}
	caps := req.ClientCapabilities
	if !caps.Auth.Terminal && !metaFlag(caps.Meta, "terminal-auth") {
		return nil
	}
	hint, _ := json.Marshal(map[string]any{"terminal-auth": map[string]any{
		"command": l.Command, "args": l.Args, "label": "acp-agent login",
	}})
	return &acp.AuthMethod{Terminal: &acp.AuthMethodTerminal{
		ID:          terminalLoginID,
		Name:        "Log in from a terminal",
		Description: "Set up OpenAI or Anthropic: enter an API key, which is checked and kept in the OS keychain (else in a file only you can read).",
		Args:        l.Args,
		Meta:        hint,
	}}
}

// metaFlag reports whether _meta has name set to true.
func metaFlag(meta json.RawMessage, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return false
	}
	var b bool
	return json.Unmarshal(m[name], &b) == nil && b
}
