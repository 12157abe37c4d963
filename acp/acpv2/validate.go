package acpv2

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
)

// Decode decodes the params of a method the agent serves, whose schema
// definition is def, into p: every member def requires must be there and
// not null, the members must have their types, and then p's Validate, if
// it has one, checks what the schema says beyond types (absolute paths,
// non-empty prompts, known cursors). Errors name the member first
// ("cwd: must be an absolute path"); the caller answers them -32602.
// Absent params are an empty object.
func Decode(def string, raw []byte, p any) error {
	if len(raw) == 0 || isNull(raw) {
		raw = []byte("{}")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return errors.New("params: must be an object")
	}
	for _, r := range requiredMembers()[def] {
		if v, ok := members[r]; !ok || isNull(v) {
			return errRequired(r)
		}
	}
	if err := json.Unmarshal(raw, p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%s: expected %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return err
	}
	if v, ok := p.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

func errRequired(member string) error { return fmt.Errorf("%s: required", member) }

func checkAbsolute(member, path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s: must be an absolute path", member)
	}
	return nil
}

func checkDirectories(dirs []AbsolutePath) error {
	for i, d := range dirs {
		if err := checkAbsolute(fmt.Sprintf("additionalDirectories[%d]", i), d); err != nil {
			return err
		}
	}
	return nil
}

// checkMCPServers checks each server's required members and that names
// are unique (servers are told apart by name). Whether a transport was
// advertised is the server's to check.
func checkMCPServers(servers []McpServer) error {
	names := map[string]bool{}
	for i, s := range servers {
		field := fmt.Sprintf("mcpServers[%d]", i)
		var name string
		switch {
		case s.Stdio != nil:
			name = s.Stdio.Name
			if s.Stdio.Command == "" {
				// The schema says absolute; clients send names on PATH
				// too, which the agent resolves as v1's do.
				return errRequired(field + ".command")
			}
		case s.HTTP != nil:
			name = s.HTTP.Name
			if s.HTTP.URL == "" {
				return errRequired(field + ".url")
			}
		case s.ACP != nil:
			name = s.ACP.Name
			if s.ACP.ServerID == "" {
				return errRequired(field + ".serverId")
			}
		case s.Other != nil:
			var n struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(s.Other.Raw, &n)
			name = n.Name
		default:
			return errRequired(field)
		}
		if name == "" {
			return errRequired(field + ".name")
		}
		if names[name] {
			return fmt.Errorf("%s.name: %q is the name of an earlier server", field, name)
		}
		names[name] = true
	}
	return nil
}

func checkSystemPrompt(sp *SystemPrompt) error {
	if sp == nil {
		return nil
	}
	switch sp.Mode {
	case SystemPromptModeAppend, SystemPromptModeOverride:
	default:
		return fmt.Errorf("systemPrompt.mode: %q is not supported", sp.Mode)
	}
	if len(sp.Content) == 0 {
		return errors.New("systemPrompt.content: must not be empty")
	}
	return nil
}

// Validate checks the session's roots and MCP servers.
func (r *NewSessionRequest) Validate() error {
	return firstErr(checkAbsolute("cwd", r.CWD), checkDirectories(r.AdditionalDirectories),
		checkMCPServers(r.MCPServers), checkSystemPrompt(r.SystemPrompt))
}

// Validate checks the roots, the MCP servers and the replay cursor: only
// {"type":"start"} is supported, and any other is refused (the schema
// forbids resuming without the replay asked for).
func (r *ResumeSessionRequest) Validate() error {
	if r.ReplayFrom != nil && r.ReplayFrom.Start == nil {
		return fmt.Errorf("replayFrom: cursor type %q is not supported (only \"start\")", r.ReplayFrom.Tag())
	}
	return firstErr(checkAbsolute("cwd", r.CWD), checkDirectories(r.AdditionalDirectories),
		checkMCPServers(r.MCPServers), checkSystemPrompt(r.SystemPrompt))
}

// Validate checks the new session's roots and MCP servers.
func (r *ForkSessionRequest) Validate() error {
	return firstErr(checkAbsolute("cwd", r.CWD), checkDirectories(r.AdditionalDirectories),
		checkMCPServers(r.MCPServers), checkSystemPrompt(r.SystemPrompt))
}

// Validate refuses an empty prompt.
func (r *PromptRequest) Validate() error {
	if len(r.Prompt) == 0 {
		return errors.New("prompt: must not be empty")
	}
	return nil
}

// Validate checks the cwd filter.
func (r *ListSessionsRequest) Validate() error {
	if r.CWD != "" {
		return checkAbsolute("cwd", r.CWD)
	}
	return nil
}

// Validate checks that the value has the type its "type" names; another
// value type is not supported.
func (r *SetSessionConfigOptionRequest) Validate() error {
	if len(r.Value) == 0 || isNull(r.Value) {
		return errRequired("value")
	}
	switch r.Type {
	case "":
		return errRequired("type")
	case ConfigValueTypeID:
		if _, ok := r.ValueID(); !ok {
			return errors.New("value: must be a string (type \"id\")")
		}
	case ConfigValueTypeBoolean:
		if _, ok := r.BoolValue(); !ok {
			return errors.New("value: must be a boolean (type \"boolean\")")
		}
	default:
		return fmt.Errorf("type: value type %q is not supported", r.Type)
	}
	return nil
}

// Validate refuses an empty title.
func (r *SetSessionTitleRequest) Validate() error {
	if r.Title == "" {
		return errors.New("title: must not be empty")
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
