package policy

import (
	"fmt"
	"os"
	"path/filepath"
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

// The scope an allow_always stores for one command: exact by default,
// a program scope for read-only programs with workspace paths, a git
// scope for read-only subcommands.
func TestCommandMemoryScopes(t *testing.T) {
	fs := newFakeSystem(t)
	require.NoError(t, os.MkdirAll(filepath.Join(fs.work, "docs"), 0o755))
	tests := []struct {
		line, kind, program string
	}{
		{"cat README.md", ApprovalProgram, "cat"},
		{"cat -n a b", ApprovalProgram, "cat"},
		{"cat ~/x", ApprovalExact, ""},
		{"cat /etc/passwd", ApprovalExact, ""},
		{"cat ../x", ApprovalExact, ""},
		{"cat docs", ApprovalExact, ""},
		{"ls docs", ApprovalProgram, "ls"},
		{"ls -L docs", ApprovalExact, ""},
		{"grep -n foo a", ApprovalProgram, "grep"},
		{"grep -n foo x", ApprovalExact, ""}, // x is a directory
		{"grep -rn x .", ApprovalExact, ""},
		{"grep --file=a x", ApprovalExact, ""},
		{"grep -f/etc/passwd x", ApprovalExact, ""},
		{"head --lines=5 a", ApprovalProgram, "head"},
		{"head --lines=/etc/x a", ApprovalExact, ""},
		{"find . -name x", ApprovalProgram, "find"},
		{"find -L .", ApprovalExact, ""},
		{"wc --files0-from=a", ApprovalExact, ""},
		// Unambiguous prefixes of banned long options (GNU getopt_long).
		{"grep --recurs foo", ApprovalExact, ""},
		{"grep --dir=recurse foo", ApprovalExact, ""},
		{"grep --deref foo", ApprovalExact, ""},
		{"wc --files0=a", ApprovalExact, ""},
		{"grep --count foo a", ApprovalProgram, "grep"},
		{"file -z a", ApprovalExact, ""},
		{"file a", ApprovalProgram, "file"},
		{"echo ~ /etc", ApprovalProgram, "echo"},
		{"./ls docs", ApprovalExact, ""},
		{"git status", ApprovalGit, "status"},
		{"git status --porcelain=v2 docs", ApprovalGit, "status"},
		{"git log --oneline -5", ApprovalGit, "log"},
		{"git diff --no-index a b", ApprovalExact, ""},
		{"git show HEAD:.env", ApprovalExact, ""},
		{"git show :.env", ApprovalExact, ""},
		{"git diff -- ':/'", ApprovalExact, ""},
		{"git log --format=%h:%s", ApprovalGit, "log"},
		{"git branch", ApprovalGit, "branch"},
		{"git branch -a -v", ApprovalGit, "branch"},
		{"git branch x", ApprovalExact, ""},
		{"git branch --list 'x*'", ApprovalGit, "branch"},
		{"git branch -D x", ApprovalExact, ""},
		{"git tag", ApprovalGit, "tag"},
		{"git tag -a v1", ApprovalExact, ""},
		{"git tag -v v1", ApprovalExact, ""},
		{"git remote -v", ApprovalGit, "remote"},
		{"git remote set-url o u", ApprovalExact, ""},
		{"git stash list", ApprovalExact, ""},
		{"git --no-pager log", ApprovalGit, "log"},
		{"git log -- /etc", ApprovalExact, ""},
		{"rm -rf build", ApprovalExact, ""},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cl := fs.parse(t, tt.line)
			require.Empty(t, cl.Risks)
			as := allowApprovals(cl, fs.ctx())
			require.Len(t, as, 1)
			require.Equal(t, tt.kind, as[0].Kind)
			if tt.kind != ApprovalExact {
				require.Equal(t, tt.program, as[0].Program)
			}
		})
	}
}

func TestDescribeApprovalNamesTheScope(t *testing.T) {
	fs := newFakeSystem(t)
	tests := []struct{ line, folder, want string }{
		{"git status", ".", "Always allow `git status` in this folder"},
		{"git status", "sub", "Always allow `git status` in the folder sub"},
		{"cat a", ".", "Always allow `cat` (any files in the workspace)"},
		{"echo hi", ".", "Always allow `echo` (any arguments)"},
		{"rm -rf 'a b' ~/c", ".", "Always allow `rm -rf 'a b' ~/c` exactly, in this folder"},
		{"cat a; cat b", ".", "Always allow `cat` (any files in the workspace)"},
		// A backtick in the line cannot end its code span early.
		{"rm 'a`b'", ".", "Always allow ``rm 'a`b'`` exactly, in this folder"},
		{"cd x && make", ".", "Always allow exactly this line, in this folder"},
	}
	for _, tt := range tests {
		got, ok := DescribeApproval(fs.parse(t, tt.line), fs.ctx(), tt.folder)
		require.True(t, ok, tt.line)
		require.Equal(t, tt.want, got)
	}
	_, ok := DescribeApproval(fs.parse(t, "ls $(x)"), fs.ctx(), ".")
	require.False(t, ok, "a risky line cannot be remembered")
	_, ok = DescribeApproval(fs.parse(t, "ls"), CommandContext{}, ".")
	require.False(t, ok, "without a directory nothing is remembered")
}

// Approvals restored from a file are the ones stored, and the directory
// is part of exact and git approvals.
func TestCommandMemoryRestoreAndDirectory(t *testing.T) {
	fs := newFakeSystem(t)
	var m CommandMemory
	as := m.Remember(fs.parse(t, "rm -rf build && git status"), fs.ctx(), DecisionAllow)
	require.Len(t, as, 3, "rm exactly, git status in this folder, and git status exactly")
	var m2 CommandMemory
	m2.Restore(as, DecisionAllow)
	require.Equal(t, DecisionAllow, m2.Lookup(fs.parse(t, "rm -rf build"), fs.ctx()))
	require.Equal(t, DecisionAllow, m2.Lookup(fs.parse(t, "git status -s"), fs.ctx()))
	other := fs.ctx()
	other.Dir = filepath.Join(fs.work, "x")
	require.Equal(t, DecisionNone, m2.Lookup(fs.parse(t, "rm -rf build"), other))
	require.Equal(t, DecisionNone, m2.Lookup(fs.parse(t, "git status"), other))
	m2.Reset()
	require.Equal(t, DecisionNone, m2.Lookup(fs.parse(t, "rm -rf build"), fs.ctx()))
	// Restoring allows as rejects (or the reverse) stores nothing.
	m2.Restore(as, DecisionReject)
	require.Equal(t, DecisionNone, m2.Lookup(fs.parse(t, "rm -rf build"), fs.ctx()))
}
