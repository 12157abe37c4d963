package pricing

// UsageSnapshot is a UsageReport as it stands: its totals and the rounds
// it keeps, for storage (a session file rewritten after compaction keeps
// its usage in one record).
type UsageSnapshot struct {
	Totals UsageTotals  `json:"totals"`
	Rounds []UsageRound `json:"rounds,omitempty"`
}

// Snapshot returns the report's totals and kept rounds.
func (r *UsageReport) Snapshot() UsageSnapshot {
	return UsageSnapshot{Totals: r.Totals(), Rounds: r.Rounds()}
}

// Restore makes the report what the snapshot says (rounds beyond the cap
// are dropped, oldest first); rounds added later count on top of it.
func (r *UsageReport) Restore(s UsageSnapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.totals = s.Totals
	r.totals.Cost = nil
	r.cost, r.priced = 0, s.Totals.Cost != nil
	if s.Totals.Cost != nil {
		r.cost = *s.Totals.Cost
	}
	rounds := s.Rounds
	if n := r.limit(); len(rounds) > n {
		rounds = rounds[len(rounds)-n:]
	}
	r.rounds = make([]UsageRound, len(rounds))
	for i, rd := range rounds {
		if rd.Cost != nil {
			c := *rd.Cost
			rd.Cost = &c
		}
		r.rounds[i] = rd
	}
}
