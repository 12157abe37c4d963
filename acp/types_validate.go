package acp

import (
	"fmt"
	"path/filepath"

	"github.com/acp-agent/acp-agent/internal/sessionid"
)

// Validate methods check the required members of the requests an agent
// receives, after decoding. They return a plain error whose text starts with
// the offending member in JSON form ("cwd: must be an absolute path",
// "mcpServers[1].command: required"); the caller maps it to -32602 Invalid
// params. Type mismatches are already reported by json.Unmarshal.
//
// A required array counts as missing when the decoded slice is nil (the
// member was absent or null); [] is valid.

func errRequired(field string) error { return fmt.Errorf("%s: required", field) }

// MaxSessionIDLen is the longest session id the agent accepts.
const MaxSessionIDLen = 128

// ValidateSessionID checks the syntax of a session id a client sent: 1 to
// MaxSessionIDLen bytes of ASCII letters, digits, '-', '_' and '.', not
// starting with '.' and not containing "..", and not spelled like a
// session store's file or a Windows device (sessionid.NameClash). The
// agent mints UUIDs; an id
// outside this syntax can never name one of its sessions, and the check
// runs at decoding, before anything looks the id up, so a hostile id
// ("../x", "/etc", "a\x00b") never reaches the session store or the
// filesystem. persistence.ValidateID applies the same rule to file names.
func ValidateSessionID(id SessionId) error {
	if id == "" {
		return errRequired("sessionId")
	}
	bad := func(why string) error {
		return fmt.Errorf("sessionId: invalid session id %q: %s", id, why)
	}
	if len(id) > MaxSessionIDLen {
		return bad(fmt.Sprintf("%d bytes, the limit is %d", len(id), MaxSessionIDLen))
	}
	if id[0] == '.' {
		return bad("starts with a dot")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		case c == '.':
			if i+1 < len(id) && id[i+1] == '.' {
				return bad(`contains ".."`)
			}
		default:
			return bad("allowed are ASCII letters, digits, '-', '_' and '.'")
		}
	}
	if why := sessionid.NameClash(string(id)); why != "" {
		return bad(why)
	}
	return nil
}

func validateSessionID(id SessionId) error { return ValidateSessionID(id) }

func validateCWD(field, cwd string, required bool) error {
	if cwd == "" {
		if required {
			return errRequired(field)
		}
		return nil
	}
	if !filepath.IsAbs(cwd) {
		return fmt.Errorf("%s: must be an absolute path", field)
	}
	return nil
}

func validateDirs(dirs []string) error {
	for i, d := range dirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("additionalDirectories[%d]: must be an absolute path", i)
		}
	}
	return nil
}

func validateMCPServers(servers []McpServer, required bool) error {
	if servers == nil {
		if required {
			return errRequired("mcpServers")
		}
		return nil
	}
	for i, s := range servers {
		field := fmt.Sprintf("mcpServers[%d]", i)
		switch {
		case s.Stdio != nil:
			if s.Stdio.Command == "" {
				return errRequired(field + ".command")
			}
		case s.HTTP != nil:
			if s.HTTP.URL == "" {
				return errRequired(field + ".url")
			}
		case s.SSE != nil:
			if s.SSE.URL == "" {
				return errRequired(field + ".url")
			}
		case s.ACP != nil:
			if s.ACP.ServerID == "" {
				return errRequired(field + ".serverId")
			}
		case s.Unknown != nil:
			// Unknown transports are tolerated; the agent skips them.
		default:
			return errRequired(field)
		}
	}
	return nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Validate checks protocolVersion was present.
func (r *InitializeRequest) Validate() error {
	if r.protocolVersionMissing {
		return errRequired("protocolVersion")
	}
	return nil
}

// Validate checks nothing: logout has no required field.
func (r *LogoutRequest) Validate() error { return nil }

// Validate checks methodId.
func (r *AuthenticateRequest) Validate() error {
	if r.MethodID == "" {
		return errRequired("methodId")
	}
	return nil
}

// Validate checks cwd (absolute), mcpServers (required) and
// additionalDirectories (absolute).
func (r *NewSessionRequest) Validate() error {
	return firstErr(
		validateCWD("cwd", r.CWD, true),
		validateMCPServers(r.MCPServers, true),
		validateDirs(r.AdditionalDirectories),
		validateSystemPrompt(r.SystemPrompt),
	)
}

// Validate checks sessionId, cwd, mcpServers (required) and
// additionalDirectories.
func (r *LoadSessionRequest) Validate() error {
	return firstErr(
		validateSessionID(r.SessionID),
		validateCWD("cwd", r.CWD, true),
		validateMCPServers(r.MCPServers, true),
		validateDirs(r.AdditionalDirectories),
		validateSystemPrompt(r.SystemPrompt),
	)
}

// Validate checks sessionId, cwd, mcpServers (optional) and
// additionalDirectories.
func (r *ResumeSessionRequest) Validate() error {
	return firstErr(
		validateSessionID(r.SessionID),
		validateCWD("cwd", r.CWD, true),
		validateMCPServers(r.MCPServers, false),
		validateDirs(r.AdditionalDirectories),
		validateSystemPrompt(r.SystemPrompt),
	)
}

// Validate checks sessionId, cwd, mcpServers (optional) and
// additionalDirectories.
func (r *ForkSessionRequest) Validate() error {
	return firstErr(
		validateSessionID(r.SessionID),
		validateCWD("cwd", r.CWD, true),
		validateMCPServers(r.MCPServers, false),
		validateDirs(r.AdditionalDirectories),
		validateSystemPrompt(r.SystemPrompt),
	)
}

// Validate checks sessionId.
func (r *CloseSessionRequest) Validate() error { return validateSessionID(r.SessionID) }

// Validate checks sessionId.
func (r *DeleteSessionRequest) Validate() error { return validateSessionID(r.SessionID) }

// Validate checks that cwd, when given, is absolute, and the archive
// filter.
func (r *ListSessionsRequest) Validate() error {
	if err := validateCWD("cwd", r.CWD, false); err != nil {
		return err
	}
	switch r.Archived {
	case "", "exclude", "include", "only":
		return nil
	}
	return fmt.Errorf("archived: %q is not exclude, include or only", r.Archived)
}

// Validate checks sessionId and modeId.
func (r *SetSessionModeRequest) Validate() error {
	if err := validateSessionID(r.SessionID); err != nil {
		return err
	}
	if r.ModeID == "" {
		return errRequired("modeId")
	}
	return nil
}

// Validate checks sessionId, configId and value.
func (r *SetSessionConfigOptionRequest) Validate() error {
	if err := validateSessionID(r.SessionID); err != nil {
		return err
	}
	if r.ConfigID == "" {
		return errRequired("configId")
	}
	if v := r.Value; v.ValueID == nil && v.Bool == nil && v.Unknown == nil {
		return errRequired("value")
	}
	return nil
}

// Validate checks sessionId and prompt ([] is allowed).
func (r *PromptRequest) Validate() error {
	if err := validateSessionID(r.SessionID); err != nil {
		return err
	}
	if r.Prompt == nil {
		return errRequired("prompt")
	}
	for i, b := range r.Prompt {
		if b.Tag() == "" {
			return errRequired(fmt.Sprintf("prompt[%d]", i))
		}
	}
	return nil
}

// Validate checks sessionId.
func (r *CancelNotification) Validate() error { return validateSessionID(r.SessionID) }

// Validate checks requestId was present (null is a valid request id).
func (r *CancelRequestNotification) Validate() error {
	if len(r.RequestID) == 0 {
		return errRequired("requestId")
	}
	return nil
}

// Validate checks sessionId and that title is there.
func (r *SetSessionTitleRequest) Validate() error {
	if err := validateSessionID(r.SessionID); err != nil {
		return err
	}
	if r.Title == nil {
		return fmt.Errorf("title: required, and must not be null")
	}
	return nil
}

// Validate checks sessionId.
func (r *SessionStatusRequest) Validate() error { return validateSessionID(r.SessionID) }

// Validate checks sessionId.
func (r *ArchiveSessionRequest) Validate() error { return validateSessionID(r.SessionID) }
