package agent

import (
	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// uniqueToolCallIDs gives a fresh id to each call that has none or one
// already used in the session (by a call before it in calls, or by any
// call the session has had, including those a /clear, a compaction or a
// rewind took out of the transcript: the client still shows them). The
// model's ids are its own to choose, and models repeat them (local ones
// often number each response's calls from call_0; a hostile one may on
// purpose), but ACP's toolCallId names one call within the session:
// clients key their entries and the permission question they show by it,
// so a repeated id would put a question on another call's entry and let
// one call's updates overwrite another's. The fresh id goes to the
// transcript, the provider and the client alike.
func (s *Session) uniqueToolCallIDs(calls []llm.ToolCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	used := s.callIDs.index(s.tr.entries)
	for i := range calls {
		if calls[i].ID == "" || used[calls[i].ID] {
			calls[i].ID = "call_" + uuid.NewString()
		}
		used[calls[i].ID] = true
	}
}

// callIDs is the set of tool call ids a session has used, grown with its
// transcript: each response's check reads only the entries appended
// since the last one, not the whole transcript (which made a long
// session's checks quadratic: 6 ms and 3.5 MB per response at 100,000
// entries). It is never shrunk.
type callIDs struct {
	used map[string]bool
	n    int    // the entries indexed: entries[:n]
	last *Entry // entries[n-1] when indexed: a transcript replaced since (entries are immutable) is indexed again
}

// index adds the ids of entries not indexed yet and returns the set.
func (c *callIDs) index(entries []*Entry) map[string]bool {
	if c.used == nil {
		c.used = make(map[string]bool)
	}
	from := c.n
	if from > len(entries) || from > 0 && entries[from-1] != c.last {
		from = 0 // replaced (a /clear, a compaction, a rewind, a load)
	}
	for _, e := range entries[from:] {
		for _, tc := range e.ToolCalls {
			c.used[tc.ID] = true
		}
	}
	c.n = len(entries)
	if c.n > 0 {
		c.last = entries[c.n-1]
	}
	return c.used
}
