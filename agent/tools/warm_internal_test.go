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
// announced, or after the delay when none was, and never once the
// workspace closed; close leaves no goroutine behind.
func TestWarmerStartsTheHelperOnceWhenACommandIsComingOrAfterTheDelay(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name  string
		delay time.Duration
		soon  int  // soon calls before close
		want  bool // warmed before close returns
	}{
		{"a command is coming", time.Hour, 2, true},
		{"the delay passes", time.Millisecond, 0, true},
		{"closed first", time.Hour, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var warmed atomic.Int32
			var wm warmer
			wm.start(func() { warmed.Add(1) }, tt.delay)
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
