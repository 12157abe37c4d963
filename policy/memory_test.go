package policy

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCommandMemoryZeroValueRemembersNothing(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "ls"), fs.ctx()))
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, ""), fs.ctx()))
}

func TestCommandMemoryAllowNeedsEveryCommandRemembered(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	m.Remember(fs.parse(t, "go test ./..."), fs.ctx(), DecisionAllow)
	tests := []struct {
		line string
		want Decision
	}{
		{"go test ./...", DecisionAllow},
		{"go test -run X ./pkg", DecisionNone},
		{"go vet ./...", DecisionNone},
		{"go test ./... && ls", DecisionNone},
		{"go -C x test", DecisionNone},
		{"./go test ./...", DecisionNone},
		{"", DecisionNone},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			require.Equal(t, tt.want, m.Lookup(fs.parse(t, tt.line), fs.ctx()))
		})
	}
	m.Remember(fs.parse(t, "ls"), fs.ctx(), DecisionAllow)
	require.Equal(t, DecisionAllow, m.Lookup(fs.parse(t, "go test ./... && ls"), fs.ctx()))
}

func TestCommandMemoryNeverRemembersRiskyLinesByKey(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	risky := fs.parse(t, "ls $(rm -rf /)")
	require.NotEmpty(t, risky.Risks)
	m.Remember(risky, fs.ctx(), DecisionAllow)
	require.Equal(t, DecisionNone, m.Lookup(risky, fs.ctx()), "allow of a risky line is not remembered")
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "ls"), fs.ctx()), "its keys are not remembered either")
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "rm -rf /"), fs.ctx()))

	m.Remember(risky, fs.ctx(), DecisionReject)
	require.Equal(t, DecisionReject, m.Lookup(risky, fs.ctx()), "reject of a risky line is remembered verbatim")
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "ls"), fs.ctx()), "but not for its keys")
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "ls  $(rm -rf /)"), fs.ctx()), "verbatim means byte for byte")
}

func TestCommandMemoryRejectOfMultiCommandLineRejectsEachCommand(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	m.Remember(fs.parse(t, "ls; rm -rf /"), fs.ctx(), DecisionReject)
	require.Equal(t, DecisionReject, m.Lookup(fs.parse(t, "ls"), fs.ctx()))
	require.Equal(t, DecisionReject, m.Lookup(fs.parse(t, "rm -rf /"), fs.ctx()))
}

func TestCommandMemoryDecisionNoneForgets(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	cl := fs.parse(t, "git status")
	m.Remember(cl, fs.ctx(), DecisionReject)
	m.Remember(cl, fs.ctx(), DecisionNone)
	require.Equal(t, DecisionNone, m.Lookup(cl, fs.ctx()))
	m.Remember(cl, fs.ctx(), DecisionAllow)
	require.Equal(t, DecisionAllow, m.Lookup(cl, fs.ctx()))
}

func TestCommandMemoryIsSafeForConcurrentUse(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	lines := make([]CommandLine, 16)
	for i := range lines {
		lines[i] = fs.parse(t, fmt.Sprintf("ls -%d", i))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				cl := lines[(g+i)%len(lines)]
				m.Remember(cl, fs.ctx(), DecisionAllow)
				_ = m.Lookup(cl, fs.ctx())
			}
		}()
	}
	wg.Wait()
	for _, cl := range lines {
		require.Equal(t, DecisionAllow, m.Lookup(cl, fs.ctx()))
	}
}

func TestDecisionString(t *testing.T) {
	require.Equal(t, "none", DecisionNone.String())
	require.Equal(t, "allow", DecisionAllow.String())
	require.Equal(t, "reject", DecisionReject.String())
}
