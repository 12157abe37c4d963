package runtime

import (
	"context"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// Run runs spec to its end on the local terminal, like ClientTerminal.Run:
// it waits for the exit (spec.Timeout kills the process group), and always
// releases the process. ctx ends the run by killing the group; its error
// is then returned. started is not called: a local process has no
// terminal the editor could show.
func (t *LocalTerminal) Run(ctx context.Context, spec CommandSpec, _ func(terminalID string)) (CommandResult, error) {
	p, err := t.Start(ctx, spec)
	if err != nil {
		return CommandResult{}, err
	}
	defer p.Release()
	st, err := p.Wait(ctx)
	if err != nil && ctx.Err() != nil {
		_ = p.Kill()
		return CommandResult{}, context.Cause(ctx)
	}
	// Another Wait error (descendants kept the output pipe open past
	// WaitDelay) still comes with the command's exit status.
	out, truncated, _ := p.Output()
	return CommandResult{Output: out, Truncated: truncated, ExitCode: st.ExitCode, Signal: st.Signal, TimedOut: st.TimedOut,
		Confined: p.confinement}, nil
}

// CommandResult is how a command run ended.
type CommandResult struct {
	// Output is the command's output (stdout and stderr), its tail when
	// Truncated.
	Output    string
	Truncated bool
	// ExitCode is nil when the command was killed by a signal (Signal).
	ExitCode *int
	Signal   string
	// TimedOut: the command ran past its timeout and was killed.
	TimedOut bool
	// TerminalID is the editor's terminal, for a command run there.
	TerminalID string
	// Confined is how the sandbox confined the command; nil when it ran
	// unconfined.
	Confined *Confinement
}

// Confinement is how the sandbox confined one command, so what is said
// about a failure matches what held it.
type Confinement struct {
	// Policy is what the command was allowed, Network as it had it.
	Policy sandbox.Policy
	// Mounts: its denied paths were masked by mount and .git made a
	// read-only bind mount, in a mount namespace of its own, where each
	// directory holding a denied path or a .env is bound onto itself
	// (rename(2) across its edge fails with EXDEV).
	Mounts bool
	// GrantedAround: its denied paths and .git were kept from it by
	// granting rights around them (the fallback without mounts), so
	// nothing new could be created directly in a directory holding one.
	GrantedAround bool
}
