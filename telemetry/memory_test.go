package telemetry

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemorySinkKeepsNewestEvents(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		emit      int
		wantLen   int
		wantFirst int // request id of the oldest kept event
	}{
		{"under the default bound", 0, 5, 5, 0},
		{"exactly the default bound", 0, MemorySinkLimit, MemorySinkLimit, 0},
		{"over the default bound", 0, MemorySinkLimit + 7, MemorySinkLimit, 7},
		{"small limit wraps several times", 3, 10, 3, 7},
		{"negative limit means default", -1, 4, 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &MemorySink{Limit: tt.limit}
			for i := range tt.emit {
				m.Emit(Event{Name: EventPromptStarted, RequestID: strconv.Itoa(i)})
			}
			evs := m.Events()
			require.Len(t, evs, tt.wantLen)
			require.Len(t, m.Names(), tt.wantLen)
			for i, e := range evs {
				assert.Equal(t, strconv.Itoa(tt.wantFirst+i), e.RequestID, "event %d out of order", i)
			}
		})
	}
}

func TestMemorySinkReset(t *testing.T) {
	m := &MemorySink{Limit: 2}
	for range 5 {
		m.Emit(Event{Name: EventSessionNew})
	}
	m.Reset()
	assert.Empty(t, m.Events())
	assert.Empty(t, m.Names())
	m.Emit(Event{Name: EventSessionLoad})
	m.Emit(Event{Name: EventSessionDelete})
	m.Emit(Event{Name: EventPromptRequested})
	assert.Equal(t, []string{EventSessionDelete, EventPromptRequested}, m.Names())
}

func TestMemorySinkEventsAreCopies(t *testing.T) {
	var m MemorySink
	NewRecorder(&m).Emit(context.Background(), EventSessionNew, "s", "", AttrCwd, "/a")
	evs := m.Events()
	evs[0].Name = "changed"
	evs[0].Attributes[AttrCwd] = "/changed"
	again := m.Events()
	assert.Equal(t, EventSessionNew, again[0].Name)
	assert.Equal(t, "/a", again[0].Attributes[AttrCwd])
}

func TestMemorySinkConcurrentUse(t *testing.T) {
	m := &MemorySink{Limit: 100}
	r := NewRecorder(m)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				r.Emit(context.Background(), EventPromptStarted, strconv.Itoa(g), strconv.Itoa(i))
				if i%50 == 0 {
					_ = m.Events()
					_ = m.Names()
				}
			}
		})
	}
	wg.Wait()
	assert.Len(t, m.Events(), 100)
}

func TestNilMemorySinkDoesNothing(t *testing.T) {
	var m *MemorySink
	assert.NotPanics(t, func() {
		m.Emit(Event{Name: "x"})
		m.Reset()
		assert.Nil(t, m.Events())
		assert.Nil(t, m.Names())
	})
}
