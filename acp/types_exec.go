package acp

import "encoding/json"

// The execution-state extension (seed 002, "ACP Prompt 执行状态机"): the
// agent reports where each prompt turn is in its life, and each retry of a
// failed model call. Neither variant is part of ACP, and clients built on
// the official SDKs reject unknown sessionUpdate values, so an agent sends
// them only to a client that asked (ExecutionStateEnabled) or when its
// operator turned them on. Their JSON Schema is
// testdata/acp-agent-schema/extensions.json.

// ExecutionStateUpdate is the "execution_state_update" session update.
type ExecutionStateUpdate struct {
	ExecutionState ExecutionState  `json:"executionState"`
	Meta           json.RawMessage `json:"_meta,omitempty"`
}

// ExecutionState is one step of a prompt turn.
type ExecutionState struct {
	State ExecState `json:"state"`
	// Attempt is the retry number while retrying (1 for the first retry).
	Attempt *int `json:"attempt,omitempty"`
	// Message explains the state: the error of a retry or failure.
	Message string `json:"message,omitempty"`
}

// ExecState is the state of a prompt turn. A turn goes through queued and
// running (and retrying for each retry), then ends in exactly one of
// completed, cancelled, timed_out or failed.
type ExecState string

// Execution states. WaitingTool is declared by the seed but never sent.
const (
	ExecStateQueued      ExecState = "queued"
	ExecStateRunning     ExecState = "running"
	ExecStateWaitingTool ExecState = "waiting_tool"
	ExecStateRetrying    ExecState = "retrying"
	ExecStateCompleted   ExecState = "completed"
	ExecStateFailed      ExecState = "failed"
	ExecStateCancelled   ExecState = "cancelled"
	ExecStateTimedOut    ExecState = "timed_out"
)

// Terminal reports whether s ends a turn.
func (s ExecState) Terminal() bool {
	switch s {
	case ExecStateCompleted, ExecStateFailed, ExecStateCancelled, ExecStateTimedOut:
		return true
	}
	return false
}

// RetryUpdate is the "retry_update" session update, sent before the
// back-off of each retry of a model call.
type RetryUpdate struct {
	Retry RetryInfo       `json:"retry"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// RetryInfo describes one retry.
type RetryInfo struct {
	Attempt     int    `json:"attempt"`     // 1 for the first retry
	MaxAttempts int    `json:"maxAttempts"` // retries + 1
	Reason      string `json:"reason,omitempty"`
}

// ExecutionStateEnabled reports whether the client asked for execution-state
// updates: clientCapabilities._meta["acp-agent"].executionState == true.
func ExecutionStateEnabled(caps ClientCapabilities) bool {
	if len(caps.Meta) == 0 {
		return false
	}
	var meta struct {
		Agent struct {
			ExecutionState bool `json:"executionState"`
		} `json:"acp-agent"`
	}
	// A _meta that does not have this shape is someone else's business,
	// not an error: it just does not opt in.
	if json.Unmarshal(caps.Meta, &meta) != nil {
		return false
	}
	return meta.Agent.ExecutionState
}
