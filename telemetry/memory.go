package telemetry

import (
	"maps"
	"sync"
)

// MemorySinkLimit is how many events a MemorySink keeps by default.
const MemorySinkLimit = 10_000

// MemorySink keeps the newest events in memory, for tests. The zero value
// is ready to use; it must not be copied after first use.
type MemorySink struct {
	// Limit is how many events are kept (MemorySinkLimit when ≤ 0); older
	// ones are dropped. Set it before first use.
	Limit int

	mu    sync.Mutex
	buf   []Event // ring buffer once full
	start int     // index of the oldest event in buf
}

// Emit stores e, dropping the oldest event when the sink is full.
func (m *MemorySink) Emit(e Event) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	limit := m.Limit
	if limit <= 0 {
		limit = MemorySinkLimit
	}
	if len(m.buf) < limit {
		m.buf = append(m.buf, e)
		return
	}
	m.buf[m.start] = e
	m.start = (m.start + 1) % len(m.buf)
}

// Events returns a copy of the stored events, oldest first; attribute maps
// are copied too.
func (m *MemorySink) Events() []Event {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Event, 0, len(m.buf))
	for i := range m.buf {
		e := m.buf[(m.start+i)%len(m.buf)]
		e.Attributes = maps.Clone(e.Attributes)
		out = append(out, e)
	}
	return out
}

// Names returns the names of the stored events, oldest first.
func (m *MemorySink) Names() []string {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.buf))
	for i := range m.buf {
		out = append(out, m.buf[(m.start+i)%len(m.buf)].Name)
	}
	return out
}

// Reset drops all stored events.
func (m *MemorySink) Reset() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.buf = nil
	m.start = 0
}
