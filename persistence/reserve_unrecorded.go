package persistence

// Unrecorded has the reservation keep no record: Keep writes nothing
// from then on, and the File that Create returns removes none. It is for
// a session whose first prompt follows its start at once (acp-agent
// exec), which has its file before anyone could open it again: the
// record would be a file made and then removed for nothing on the
// prompt's way. A session whose process ends before its file exists
// then leaves nothing to open again, as one never started. Call it
// before the first Keep; a record written before stays, and the File
// still removes it.
func (r *Reservation) Unrecorded() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kept {
		return
	}
	r.unrecorded = true
}
