package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"
)

// JSON-RPC and ACP error codes (ACP schema ErrorCode).
const (
	CodeParseError       int64 = -32700
	CodeInvalidRequest   int64 = -32600
	CodeMethodNotFound   int64 = -32601
	CodeInvalidParams    int64 = -32602
	CodeInternalError    int64 = -32603
	CodeRequestCancelled int64 = -32800
	CodeAuthRequired     int64 = -32000
	CodeResourceNotFound int64 = -32002
	// CodeSessionLocked is acp-agent's own code (ACP leaves -32000 to
	// -32099 to implementations): the session is open in another agent
	// process (docs/extensions.md, "Errors").
	CodeSessionLocked int64 = -32001
)

// codeError is a sentinel error that carries its JSON-RPC code. Callers wrap
// it with %w to add detail; WireError finds the code with errors.As.
type codeError struct {
	code int64
	msg  string
}

func (e *codeError) Error() string { return e.msg }

// Code returns the JSON-RPC error code.
func (e *codeError) Code() int64 { return e.code }

// Sentinel errors. Wrap them to add detail, for example
// fmt.Errorf("%w: cwd: must be an absolute path", ErrInvalidParams).
var (
	ErrParse            error = &codeError{CodeParseError, "parse error"}
	ErrInvalidRequest   error = &codeError{CodeInvalidRequest, "invalid request"}
	ErrMethodNotFound   error = &codeError{CodeMethodNotFound, "method not found"}
	ErrInvalidParams    error = &codeError{CodeInvalidParams, "invalid params"}
	ErrInternal         error = &codeError{CodeInternalError, "internal error"}
	ErrRequestCancelled error = &codeError{CodeRequestCancelled, "request cancelled"}
	ErrAuthRequired     error = &codeError{CodeAuthRequired, "authentication required"}
	ErrResourceNotFound error = &codeError{CodeResourceNotFound, "resource not found"}
	ErrSessionLocked    error = &codeError{CodeSessionLocked, "session locked"}
)

// ErrSessionNotFound is returned for a sessionId the agent does not know.
var ErrSessionNotFound = fmt.Errorf("%w: session", ErrResourceNotFound)

// SessionNotFound is ErrSessionNotFound for id, with {"sessionId": id} in
// the error's data, and why (if not "") after it: the one answer for a
// request whose session is not there, also when it went away while the
// request raced with session/close or session/delete.
func SessionNotFound(id SessionId, why string) error {
	err := fmt.Errorf("%w %q", ErrSessionNotFound, id)
	if why != "" {
		err = fmt.Errorf("%w: %s", err, why)
	}
	return &DataError{Err: err, Data: map[string]string{"sessionId": string(id)}}
}

// DataError attaches JSON-RPC error data to an error (for example the
// index that made a fork invalid). The code comes from the wrapped error.
type DataError struct {
	Err  error
	Data any
}

func (e *DataError) Error() string { return e.Err.Error() }
func (e *DataError) Unwrap() error { return e.Err }

// WireError turns any error into the JSON-RPC error sent to the peer. It is
// the only place where Go errors become wire errors: an error wrapping one of
// the sentinels gets that sentinel's code, context cancellation gets -32800,
// and anything else is an internal error (-32603). The message is the whole
// error text, so wrapped detail (the field that was wrong, the provider's
// message) reaches the user.
func WireError(err error) *jsonrpc2.Error {
	if err == nil {
		return nil
	}
	code := CodeInternalError
	var ce *codeError
	switch {
	case errors.As(err, &ce):
		code = ce.code
	case errors.Is(err, context.Canceled):
		code = CodeRequestCancelled
	}
	wire := &jsonrpc2.Error{Code: code, Message: err.Error()}
	var de *DataError
	if errors.As(err, &de) && de.Data != nil {
		if data, merr := json.Marshal(de.Data); merr == nil {
			raw := json.RawMessage(data)
			wire.Data = &raw
		}
	}
	return wire
}
