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
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "ls")))
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "")))
}

func TestCommandMemoryAllowNeedsEveryCommandRemembered(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	m.Remember(fs.parse(t, "go test ./..."), DecisionAllow)
	tests := []struct {
		line string
		want Decision
	}{
		{"go test ./...", DecisionAllow},
		{"go test -run X ./pkg", DecisionAllow},
		{"go vet ./...", DecisionNone},
		{"go test ./... && ls", DecisionNone},
		{"go -C x test", DecisionNone},
		{"./go test ./...", DecisionNone},
		{"", DecisionNone},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			require.Equal(t, tt.want, m.Lookup(fs.parse(t, tt.line)))
		})
	}
	m.Remember(fs.parse(t, "ls"), DecisionAllow)
	require.Equal(t, DecisionAllow, m.Lookup(fs.parse(t, "go test ./... && ls")))
}

func TestCommandMemoryNeverRemembersRiskyLinesByKey(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	risky := fs.parse(t, "ls $(rm -rf /)")
	require.NotEmpty(t, risky.Risks)
	m.Remember(risky, DecisionAllow)
	require.Equal(t, DecisionNone, m.Lookup(risky), "allow of a risky line is not remembered")
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "ls")), "its keys are not remembered either")
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "rm -rf /")))

	m.Remember(risky, DecisionReject)
	require.Equal(t, DecisionReject, m.Lookup(risky), "reject of a risky line is remembered verbatim")
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "ls")), "but not for its keys")
	require.Equal(t, DecisionNone, m.Lookup(fs.parse(t, "ls  $(rm -rf /)")), "verbatim means byte for byte")
}

func TestCommandMemoryRejectOfMultiCommandLineRejectsEachCommand(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	m.Remember(fs.parse(t, "ls; rm -rf /"), DecisionReject)
	require.Equal(t, DecisionReject, m.Lookup(fs.parse(t, "ls")))
	require.Equal(t, DecisionReject, m.Lookup(fs.parse(t, "rm -rf /")))
}

func TestCommandMemoryDecisionNoneForgets(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	cl := fs.parse(t, "git status")
	m.Remember(cl, DecisionReject)
	m.Remember(cl, DecisionNone)
	require.Equal(t, DecisionNone, m.Lookup(cl))
	m.Remember(cl, DecisionAllow)
	require.Equal(t, DecisionAllow, m.Lookup(cl))
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
				m.Remember(cl, DecisionAllow)
				_ = m.Lookup(cl)
			}
		}()
	}
	wg.Wait()
	for _, cl := range lines {
		require.Equal(t, DecisionAllow, m.Lookup(cl))
	}
}

func TestDecisionString(t *testing.T) {
	require.Equal(t, "none", DecisionNone.String())
	require.Equal(t, "allow", DecisionAllow.String())
	require.Equal(t, "reject", DecisionReject.String())
}
