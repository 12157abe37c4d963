package replay

import (
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// Provider plays a script. It is safe for concurrent use.
type Provider struct {
	// script, when set, is parsed into turns and sequence on first use
	// (Default: a start that never prompts parses nothing).
	script   []byte
	parse    sync.Once
	turns    []turn
	sequence []int // indexes of the turns without match, in order
	next     atomic.Uint64
}

//go:embed default.json
var defaultScript []byte

// Default returns a Provider playing the embedded demo script: a short
// reasoning step, then a streamed answer explaining that this is the
// offline replay model and how to configure a real one.
// The script is parsed when the first turn is played.
func Default() *Provider { return &Provider{script: defaultScript} }

// parsed fills in turns and sequence from script, once.
func (p *Provider) parsed() {
	p.parse.Do(func() {
		if p.script == nil {
			return
		}
		q, err := Parse(p.script)
		if err != nil {
			panic("replay: embedded default script: " + err.Error()) // caught by tests
		}
		p.turns, p.sequence = q.turns, q.sequence
	})
}

// Name returns "replay".
func (p *Provider) Name() string { return "replay" }

// Stream plays the turn selected for req; see the package documentation.
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, fmt.Errorf("replay: %w", context.Cause(ctx)))
			return
		}
		t, err := p.selectTurn(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if err := play(ctx, t, yield); err != nil {
			yield(llm.Event{}, err)
		}
	}
}

// selectTurn picks a matching turn, else the next turn of the sequence.
func (p *Provider) selectTurn(req *llm.Request) (*turn, error) {
	p.parsed()
	var msgs []llm.Message
	if req != nil {
		msgs = req.Messages
	}
	// A request answering a tool call continues the scripted sequence: the
	// user message that started the exchange already selected its turn.
	toolResult := len(msgs) > 0 && msgs[len(msgs)-1].Role == llm.RoleTool
	if !toolResult {
		text := lastUserText(msgs)
		for i := range p.turns {
			if m := p.turns[i].match; m != "" && strings.Contains(text, m) {
				return &p.turns[i], nil
			}
		}
	}
	if len(p.sequence) == 0 {
		return nil, fmt.Errorf("replay: no turn matches the request and the script has no turn without match")
	}
	n := p.next.Add(1) - 1
	return &p.turns[p.sequence[n%uint64(len(p.sequence))]], nil
}

func lastUserText(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return msgs[i].Text()
		}
	}
	return ""
}

// play yields t's events and its finish. It returns the error to yield, if
// any; after the consumer stops, it returns nil.
func play(ctx context.Context, t *turn, yield func(llm.Event, error) bool) error {
	calls := 0 // tool calls get consecutive indexes within the turn
	for i := range t.steps {
		st := &t.steps[i]
		for range st.repeat {
			if st.delay > 0 {
				if err := sleep(ctx, st.delay); err != nil {
					return err
				}
			} else if ctx.Err() != nil {
				return fmt.Errorf("replay: %w", context.Cause(ctx))
			}
			switch st.kind {
			case stepDelay:
				continue
			case stepError:
				return &llm.ProviderError{Provider: "replay", Message: st.errMsg}
			case stepHang:
				<-ctx.Done()
				return fmt.Errorf("replay: %w", context.Cause(ctx))
			}
			ev := st.ev
			if ev.Kind == llm.EventToolCallDelta {
				// A copy, so that consumers may keep or change what they get.
				tc := *ev.ToolCall
				tc.Index = calls
				calls++
				if st.autoID {
					tc.ID = "call_" + rand.Text()[:16]
				}
				ev.ToolCall = &tc
			} else if ev.Usage != nil {
				u := *ev.Usage
				ev.Usage = &u
			}
			if !yield(ev, nil) {
				return nil
			}
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("replay: %w", context.Cause(ctx))
	}
	yield(llm.Event{Kind: llm.EventFinish, Finish: t.finish}, nil)
	return nil
}

// sleep waits for d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("replay: %w", context.Cause(ctx))
	}
}
