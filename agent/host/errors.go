package host

import (
	"errors"
	"fmt"
)

// The kinds of the host's errors: every error the host returns for a
// request wraps one of them (or is a *NotFoundError or *LockedError), and
// an adapter turns the kind into its protocol's error code. Their texts
// are the JSON-RPC names, which the messages start with.
var (
	// ErrInvalidParams: a request named something that is not there or
	// not allowed (a bad id, an index that is no user message, a model
	// that is not a choice); nothing changed.
	ErrInvalidParams = errors.New("invalid params")
	// ErrInvalidRequest: the request cannot be served as things stand (a
	// turn runs, there is nothing to undo, the session keeps no
	// checkpoints); nothing changed.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrInternal: the host failed (the disk, a session file).
	ErrInternal = errors.New("internal error")
	// ErrNotStored: sessions are not stored (Config.Store is nil).
	ErrNotStored = errors.New("method not found")
)

// NotFoundError is the error of a request whose session is not there (or
// went away while the request raced with its close or deletion); Why,
// if set, says why.
type NotFoundError struct {
	ID  string
	Why string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("resource not found: session %q", e.ID)
	if e.Why != "" {
		msg += ": " + e.Why
	}
	return msg
}

// sessionNotFound is a *NotFoundError.
func sessionNotFound(id, why string) error { return &NotFoundError{ID: id, Why: why} }

// LockedError is the error of a load, resume, fork or deletion of a
// session another agent process has open (its lock), which the user can
// act on (close it there).
type LockedError struct {
	ID  string
	Err error // the lock's error
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("session locked: session %s is open in another acp-agent process (another editor window, or an agent that is still running); "+
		"close it there, or stop that agent, then load it again", e.ID)
}

func (e *LockedError) Unwrap() error { return e.Err }

// NotAUserMessageError is the error of a rewind to an entry index that is
// not one of the session's user messages (agent.Session's
// ForkableUserMessages lists them).
type NotAUserMessageError struct {
	Index int
}

func (e *NotAUserMessageError) Error() string {
	return fmt.Sprintf("%v: toUserEntryIndex: %d is not a user message of this session", ErrInvalidParams, e.Index)
}

func (e *NotAUserMessageError) Unwrap() error { return ErrInvalidParams }

// ParamError is an invalid parameter of a request (ErrInvalidParams):
// its text names the field for the client ("invalid params: value:
// ..."); Reason alone is what a person reads, as a slash command's
// answer does.
type ParamError struct {
	Field  string
	Reason error
}

func (e *ParamError) Error() string {
	return ErrInvalidParams.Error() + ": " + e.Field + ": " + e.Reason.Error()
}

func (e *ParamError) Unwrap() []error { return []error{ErrInvalidParams, e.Reason} }

// paramError is a *ParamError.
func paramError(field string, reason error) error { return &ParamError{Field: field, Reason: reason} }
