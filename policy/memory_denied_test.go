package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// deniedCtx is fs.ctx() with the working directory and its "secrets"
// directory holding a denied path (the home directory as the workspace,
// with ~/.ssh in it), in dir.
func (fs fakeSystem) deniedCtx(dir string) CommandContext {
	ctx := fs.ctx()
	ctx.Dir = dir
	inner := ctx.Operand
	holding := map[string]bool{fs.work: true, filepath.Join(fs.work, "secrets"): true}
	ctx.Operand = func(dir, w string) OperandInfo {
		info := inner(dir, w)
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		info.HoldsDenied = info.Dir && holding[filepath.Clean(p)]
		return info
	}
	return ctx
}

// A remembered "ls" or "find" (any files in the workspace) never covers
// a listing or walk of a directory that holds a path the file tools never
// list (OperandInfo.HoldsDenied: ~/.ssh under the home directory as the
// workspace): named as an operand, or the working directory listed for
// want of one (ls alone, ls -R, find -name x, ls -I x, whose x is a
// value). Listings of other directories, and programs that do not list
// (file), keep their wide scope.
func TestCommandMemoryListingsOfDirectoriesHoldingDeniedPathsAsk(t *testing.T) {
	fs := newFakeSystem(t)
	for _, d := range []string{"docs", "secrets"} {
		require.NoError(t, os.MkdirAll(filepath.Join(fs.work, d), 0o755))
	}
	home := fs.deniedCtx(fs.work)
	docs := fs.deniedCtx(filepath.Join(fs.work, "docs"))
	var m CommandMemory
	for _, l := range []string{"ls docs", "find docs -name x", "file docs"} {
		cl := fs.parse(t, l)
		require.Equal(t, ApprovalProgram, allowApprovals(cl, home)[0].Kind, l)
		m.Remember(cl, home, DecisionAllow)
	}
	tests := []struct {
		line string
		ctx  CommandContext
		want Decision
	}{
		{"ls", home, DecisionNone},
		{"ls -la", home, DecisionNone},
		{"ls -R", home, DecisionNone},
		{"ls -R .", home, DecisionNone},
		{"ls -R " + fs.work, home, DecisionNone},
		{"ls -R docs/..", home, DecisionNone},
		{"ls secrets", home, DecisionNone},
		{"ls docs secrets", home, DecisionNone},
		{"ls -- secrets", home, DecisionNone},
		{"ls -I docs", home, DecisionNone},
		{"ls -R --sort docs", home, DecisionNone},
		{"ls -R -- .", home, DecisionNone},
		{"ls -R ..", docs, DecisionNone},
		{"find .", home, DecisionNone},
		{"find . -name x", home, DecisionNone},
		{"find -name x", home, DecisionNone},
		{"find -name docs", home, DecisionNone},
		{"find docs secrets", home, DecisionNone},
		{`find \( -name x \)`, home, DecisionNone},
		{"find ..", docs, DecisionNone},
		// Controls: nothing denied below what is listed.
		{"ls docs", home, DecisionAllow},
		{"ls -la docs", home, DecisionAllow},
		{"ls -R docs", home, DecisionAllow},
		{"ls -R --sort=size docs", home, DecisionAllow},
		{"ls -I x docs", home, DecisionAllow},
		{"ls", docs, DecisionAllow},
		{"ls -R", docs, DecisionAllow},
		{"ls -R .", docs, DecisionAllow},
		{"find docs -type f", home, DecisionAllow},
		{"find -name x", docs, DecisionAllow},
		{"find . -name x", docs, DecisionAllow},
		{"file secrets", home, DecisionAllow},
		{"file .", home, DecisionAllow},
	}
	for _, tt := range tests {
		t.Run(tt.line+" in "+filepath.Base(tt.ctx.Dir), func(t *testing.T) {
			require.Equal(t, tt.want, m.Lookup(fs.parse(t, tt.line), tt.ctx))
		})
	}
}

// In a git repository whose working tree holds a denied path (the home
// directory as a repository: CommandContext.RepoHoldsDenied), git's
// read-only subcommands are remembered exactly: an allowed "git status"
// does not cover "git status -uall" (every untracked name under ~/.ssh)
// nor "git diff" (tracked contents). Elsewhere they keep their scope.
func TestCommandMemoryGitInARepositoryHoldingDeniedPathsIsExact(t *testing.T) {
	fs := newFakeSystem(t)
	home := fs.ctx()
	home.RepoHoldsDenied = func(dir string) bool { return dir == fs.work }
	project := fs.ctx()
	project.RepoHoldsDenied = func(string) bool { return false }
	for _, ctx := range []CommandContext{home, project} {
		var m CommandMemory
		cl := fs.parse(t, "git status")
		m.Remember(cl, ctx, DecisionAllow)
		want, kind := DecisionNone, ApprovalExact
		if !ctx.RepoHoldsDenied(ctx.Dir) {
			want, kind = DecisionAllow, ApprovalGit
		}
		require.Equal(t, kind, allowApprovals(cl, ctx)[0].Kind)
		require.Equal(t, DecisionAllow, m.Lookup(cl, ctx), "the exact line stays remembered")
		for _, l := range []string{"git status -uall", "git status --porcelain --ignored", "git --no-pager status"} {
			require.Equal(t, want, m.Lookup(fs.parse(t, l), ctx), l)
		}
	}
}
