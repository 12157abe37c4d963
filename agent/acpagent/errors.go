package acpagent

import (
	"errors"
	"fmt"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/host"
)

// WireError gives a host error its ACP error, for ACP v1 and v2 alike
// (the v2 adapter, agent/acpv2agent, answers with the same codes).
func WireError(err error) error { return wireError(err) }

// wireError gives a host error its ACP error: the host's kinds
// (host.ErrInvalidParams, ...) become acp's sentinels with the same text,
// a missing session acp.SessionNotFound, a session another process has
// open the session-locked error with its data, a bad fork index its
// index as data. Anything else passes as it is.
func wireError(err error) error {
	if err == nil {
		return nil
	}
	if nf, ok := errors.AsType[*host.NotFoundError](err); ok {
		return acp.SessionNotFound(nf.ID, nf.Why)
	}
	if l, ok := errors.AsType[*host.LockedError](err); ok {
		return sessionLockedError(l.ID, l.Err)
	}
	var code error
	for _, k := range []struct{ kind, code error }{
		{host.ErrInvalidParams, acp.ErrInvalidParams},
		{host.ErrInvalidRequest, acp.ErrInvalidRequest},
		{host.ErrInternal, acp.ErrInternal},
		{host.ErrNotStored, acp.ErrMethodNotFound},
	} {
		if errors.Is(err, k.kind) {
			code = k.code
			break
		}
	}
	if code == nil {
		return err
	}
	out := error(&codeError{err: err, code: code})
	if bad, ok := errors.AsType[*agent.InvalidForkEntryIndexError](err); ok {
		out = &acp.DataError{Err: out, Data: map[string]int{"fromUserEntryIndex": bad.Index}}
	}
	return out
}

// codeError is a host error with the acp sentinel of its kind: its text
// is the host's (which starts with the sentinel's), errors.Is finds both.
type codeError struct {
	err, code error
}

func (e *codeError) Error() string   { return e.err.Error() }
func (e *codeError) Unwrap() []error { return []error{e.err, e.code} }

// SessionLockedData is the data of the session-locked error
// (acp.CodeSessionLocked): which session, why, and what to do.
type SessionLockedData struct {
	SessionID string `json:"sessionId"`
	Reason    string `json:"reason"` // "openInAnotherProcess"
	Detail    string `json:"detail"`
}

// sessionLockedError is the error of a load, resume or fork of a session
// another agent process has open (its lock): a specific code and data an
// editor can act on, instead of an internal error.
func sessionLockedError(id string, err error) error {
	return &acp.DataError{
		Err: fmt.Errorf("%w: session %s is open in another acp-agent process (another editor window, or an agent that is still running); "+
			"close it there, or stop that agent, then load it again", acp.ErrSessionLocked, id),
		Data: SessionLockedData{SessionID: id, Reason: "openInAnotherProcess", Detail: err.Error()},
	}
}
