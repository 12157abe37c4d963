package acphttp

// SetStreamAdmitted replaces, until the returned restore is called, what
// runs when an event stream is admitted under the limit.
func SetStreamAdmitted(f func()) (restore func()) {
	old := streamAdmitted
	streamAdmitted = f
	return func() { streamAdmitted = old }
}
