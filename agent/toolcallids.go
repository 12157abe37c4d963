package agent

import (
	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// uniqueToolCallIDs gives a fresh id to each call that has none or one
// already used in the session (by a call before it in calls, or by any
// call of the transcript). The model's ids are its own to choose, and
// models repeat them (local ones often number each response's calls from
// call_0; a hostile one may on purpose), but ACP's toolCallId names one
// call within the session: clients key their entries and the permission
// question they show by it, so a repeated id would put a question on
// another call's entry and let one call's updates overwrite another's.
// The fresh id goes to the transcript, the provider and the client alike.
func (s *Session) uniqueToolCallIDs(calls []llm.ToolCall) {
	used := make(map[string]bool)
	s.mu.Lock()
	for _, e := range s.tr.entries {
		for _, c := range e.ToolCalls {
			used[c.ID] = true
		}
	}
	s.mu.Unlock()
	for i := range calls {
		if calls[i].ID == "" || used[calls[i].ID] {
			calls[i].ID = "call_" + uuid.NewString()
		}
		used[calls[i].ID] = true
	}
}
