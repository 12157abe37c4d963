package acp

import "context"

// Agent is what the AgentService drives: the model side of ACP. The service
// owns the wire (decoding, validation, ordering, cancellation); the Agent
// owns sessions. Package agent provides the implementation.
type Agent interface {
	// Initialize is told what the client offered and returns what the agent
	// offers. The protocol version is negotiated by the service.
	Initialize(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error)
	// Authenticate runs an advertised authentication method.
	Authenticate(ctx context.Context, req *AuthenticateRequest) error
	// NewSession creates a session. Its updates go to client.Updates, which
	// is valid for the life of the session.
	NewSession(ctx context.Context, req *NewSessionRequest, client *ClientConn) (Session, *NewSessionResponse, error)
}

// Session is one conversation. The service calls Prompt for one turn at a
// time per session.
type Session interface {
	// Prompt runs one turn. Updates of the turn must be handed to the
	// session's UpdateSink before Prompt returns; nothing of the turn may be
	// sent after it. When ctx is cancelled (session/cancel, shutdown), Prompt
	// stops the model and tools at once and returns; the service then answers
	// stopReason "cancelled" whatever Prompt returned.
	Prompt(ctx context.Context, req *PromptRequest) (*PromptResponse, error)
	// Close frees the session's resources. It is called once, after any
	// running Prompt has returned.
	Close() error
}
