package agent

import (
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
)

// UsageRecord is one stored fact about a session's usage, so /cost,
// usage_update and the context meter come back after a restart.
type UsageRecord struct {
	// Round is one model response (Model answered with Usage at Cost;
	// Cost is nil for an unpriced model); nil for the other forms.
	Round *pricing.UsageRound
	// Used is the context size the client was last shown (usage_update's
	// used); 0 leaves it as it was.
	Used uint64
	// Snapshot, when the file is rewritten, is the whole usage as it was:
	// it replaces everything recorded before it.
	Snapshot *pricing.UsageSnapshot
}

// UsageJournal is a Journal that stores usage too; the session records
// each response's usage in it.
type UsageJournal interface {
	RecordUsage(r UsageRecord)
}

// journalUsage stores r if the journal keeps usage.
func (s *Session) journalUsage(r UsageRecord) {
	if uj, ok := s.cfg.Journal.(UsageJournal); ok {
		uj.RecordUsage(r)
	}
}

// restoreUsage applies stored usage records in order (Restore).
func (s *Session) restoreUsage(recs []UsageRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		if r.Snapshot != nil {
			s.hist.usage.Restore(*r.Snapshot)
			s.cost = 0
			if c := r.Snapshot.Totals.Cost; c != nil {
				s.cost = *c
			}
		}
		if rd := r.Round; rd != nil {
			s.hist.usage.Add(rd.Model, rd.Usage, rd.Cost)
			if rd.Cost != nil {
				s.cost += *rd.Cost
			}
		}
		if r.Used > 0 {
			s.hist.shown = r.Used
		}
	}
}

// usageSnapshot is the usage as a rewritten file stores it.
func (s *Session) usageSnapshot() *UsageRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.hist.usage.Snapshot()
	if snap.Totals.Rounds == 0 && s.hist.shown == 0 {
		return nil
	}
	return &UsageRecord{Snapshot: &snap, Used: s.hist.shown}
}

// ContextUsage is the usage_update a client should be shown now (after
// session/load or resume): the context size it was last shown, the
// current model's window and the session's cost so far when priced. Nil
// when the window is unknown or nothing was used yet.
func (s *Session) ContextUsage() *ContextUsage {
	info := s.CurrentModel().Info
	s.mu.Lock()
	defer s.mu.Unlock()
	if info == nil || info.ContextWindow() <= 0 || s.hist.shown == 0 {
		return nil
	}
	u := &ContextUsage{Used: s.hist.shown, Size: uint64(info.ContextWindow())}
	if t := s.hist.usage.Totals(); t.Cost != nil {
		u.Cost = &Cost{Amount: *t.Cost, Currency: info.Currency}
	}
	return u
}

// usedTokens is what a response's usage says of the context: its prompt
// and its answer.
func usedTokens(u llm.Usage) uint64 { return uint64(max(u.InputTokens+u.OutputTokens, 0)) }
