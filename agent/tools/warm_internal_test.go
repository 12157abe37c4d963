package tools

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// A workspace's sandbox helper starts once: as soon as a command is
// announced, or after the delay when none was and the session can run
// one then, and never once the workspace closed; close leaves no
// goroutine behind. A session that cannot run a command when the delay
// passes (read-only, no run_command) starts none until one is announced.
func TestWarmerStartsTheHelperOnceWhenACommandIsComingOrAfterTheDelay(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	no, yes := false, true
	tests := []struct {
		name   string
		delay  time.Duration
		wanted *bool // what the session says when the delay passes; nil: not asked
		soon   int   // soon calls before close (after the question, if asked)
		want   bool  // warmed before close returns
	}{
		{"a command is coming", time.Hour, nil, 2, true},
		{"the delay passes", time.Millisecond, nil, 0, true},
		{"the delay passes where commands run", time.Millisecond, &yes, 0, true},
		{"the delay passes where no command runs", time.Millisecond, &no, 0, false},
		{"a command is coming after all", time.Millisecond, &no, 1, true},
		{"closed first", time.Hour, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warmed atomic.Int32
			var wm warmer
			var wanted func() bool
			asked := make(chan struct{})
			if tt.wanted != nil {
				wanted = func() bool { close(asked); return *tt.wanted }
			}
			wm.start(func() { warmed.Add(1) }, tt.delay, wanted)
			wm.start(func() { warmed.Add(100) }, time.Millisecond, nil) // a second start: nothing
			if tt.wanted != nil {
				<-asked
			}
			for range tt.soon {
				wm.soon()
			}
			if tt.want {
				require.Eventually(t, func() bool { return warmed.Load() == 1 }, 10*time.Second, time.Millisecond)
			}
			wm.close()
			wm.soon() // after close: nothing, and no block
			wm.close()
			want := int32(0)
			if tt.want {
				want = 1
			}
			assert.Equal(t, want, warmed.Load(), "warmed once at most")
		})
	}
	// Without a sandbox there is no warmer: soon and close do nothing.
	var none warmer
	none.soon()
	none.close()
}
