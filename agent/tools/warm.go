package tools

import (
	"sync"
	"time"
)

// warmDelay is how long after a workspace opens its sandbox helper starts
// when no command was announced before: by then an editor's user is
// still typing the first prompt, or a model still thinking about it, and
// a turn that runs no command (a search in a large tree) has had the
// cores to itself.
const warmDelay = 200 * time.Millisecond

// warmer starts the sandbox helper of a workspace's confined terminal
// ahead of its first command, on its own goroutine: when the model names
// a run_command call (soon), or warmDelay after the workspace opened,
// whichever comes first, and once. A helper is a Go program's start-up
// and a listing of the workspace's secrets files: started at once, it
// would take CPU from whatever the session's first turn does, and most
// turns run no command.
type warmer struct {
	now  chan struct{} // a command is coming: warm without waiting
	stop chan struct{} // closed by close
	wg   sync.WaitGroup
	once sync.Once
}

// start runs the warm-up goroutine, which calls warm (a terminal's Warm)
// once: when soon is called, or after delay if wanted says a command can
// run then (the session offers run_command in a mode that runs
// commands), whichever comes first, unless close comes before. A session
// where no command can run starts no helper until a call is named. close
// ends it and waits for it. A second start does nothing.
func (wm *warmer) start(warm func(), delay time.Duration, wanted func() bool) {
	if wm.now != nil {
		return
	}
	wm.now, wm.stop = make(chan struct{}, 1), make(chan struct{})
	wm.wg.Go(func() {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
			if wanted != nil && !wanted() {
				select {
				case <-wm.now:
				case <-wm.stop:
					return
				}
			}
		case <-wm.now:
		case <-wm.stop:
			return
		}
		warm()
	})
}

// soon asks for the warm-up now; it never blocks, and does nothing before
// start (no sandbox) or after the warm-up.
func (wm *warmer) soon() {
	if wm.now == nil {
		return
	}
	select {
	case wm.now <- struct{}{}:
	default: // asked already
	}
}

// close ends the warm-up goroutine (one that started a helper has
// finished starting it) and waits for it.
func (wm *warmer) close() {
	if wm.stop == nil {
		return
	}
	wm.once.Do(func() { close(wm.stop) })
	wm.wg.Wait()
}
