package policy

import "sync"

// Decision is a remembered permission answer.
type Decision int

const (
	// DecisionNone means nothing is remembered: ask.
	DecisionNone Decision = iota
	// DecisionAllow is a remembered allow_always.
	DecisionAllow
	// DecisionReject is a remembered reject_always.
	DecisionReject
)

// String returns "none", "allow" or "reject".
func (d Decision) String() string {
	switch d {
	case DecisionAllow:
		return "allow"
	case DecisionReject:
		return "reject"
	default:
		return "none"
	}
}

// CommandMemory remembers allow_always and reject_always answers for
// command lines, keyed per simple command (SimpleCommand.Key), so that
// approving "go test ./..." once covers "go test -run X ./pkg" but never
// "go test ./...; rm -rf /": the second command has its own key, which
// must be remembered too.
//
// The zero value is ready to use and safe for concurrent use. One memory
// belongs to one session; drop it to forget (session/delete, logout).
type CommandMemory struct {
	mu sync.Mutex
	// keys holds per-command decisions from risk-free lines.
	keys map[string]Decision
	// rejectedLines holds the exact source of rejected lines that had
	// Risks, which are never remembered by key.
	rejectedLines map[string]bool
}

// Remember stores d for every simple command key of cl.
//
// A line with Risks is never remembered by key: its keys do not describe
// everything it runs ("ls $(evil)" has the single key "ls"), so storing
// an allow would approve far more than the user saw, and storing a
// reject would refuse plain "ls" forever. A reject_always of such a line
// is remembered for that exact source text only, which is always safe; an
// allow_always of it is not remembered at all, so the next such line asks
// again.
//
// A reject of a risk-free multi-command line rejects every command in it
// ("ls; rm -rf /" rejects ls too): memory cannot tell which part the user
// objected to, and over-rejecting only costs a question. DecisionNone
// forgets the line's keys.
func (m *CommandMemory) Remember(cl CommandLine, d Decision) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(cl.Risks) > 0 {
		if d == DecisionReject {
			if m.rejectedLines == nil {
				m.rejectedLines = make(map[string]bool)
			}
			m.rejectedLines[cl.Source] = true
		}
		return
	}
	if m.keys == nil {
		m.keys = make(map[string]Decision)
	}
	for _, c := range cl.Commands {
		switch d {
		case DecisionAllow:
			// An earlier reject_always of the same key stands: reject wins.
			if m.keys[c.Key] != DecisionReject {
				m.keys[c.Key] = DecisionAllow
			}
		case DecisionReject:
			m.keys[c.Key] = DecisionReject
		default:
			delete(m.keys, c.Key)
		}
	}
}

// Lookup returns DecisionReject if the line was rejected verbatim or any
// of its simple commands has a remembered reject; DecisionAllow only if
// the line has no Risks, has at least one command, and every command's key
// has a remembered allow; DecisionNone otherwise.
func (m *CommandMemory) Lookup(cl CommandLine) Decision {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rejectedLines[cl.Source] {
		return DecisionReject
	}
	allAllowed := len(cl.Commands) > 0
	for _, c := range cl.Commands {
		switch m.keys[c.Key] {
		case DecisionReject:
			return DecisionReject
		case DecisionAllow:
		default:
			allAllowed = false
		}
	}
	if allAllowed && len(cl.Risks) == 0 {
		return DecisionAllow
	}
	return DecisionNone
}
