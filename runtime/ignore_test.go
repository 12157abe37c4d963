package runtime

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/policy"
)

// Grep and GlobWith skip what git would ignore, with git's rules: the
// repository's .gitignore files at every level (also above the searched
// directory), .ignore, .git/info/exclude, negation, directory-only and
// anchored patterns, "**"; IncludeIgnored searches everything.
func TestSearchesSkipWhatGitIgnores(t *testing.T) {
	repo := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(repo, "xdg"))
	put := func(rel, content string) {
		p := filepath.Join(repo, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	put(".git/info/exclude", "excluded.txt\n")
	put("xdg/git/ignore", "*.global\n")
	put(".gitignore", "# comment\n*.log\n!keep.log\nbuild/\n/rootonly.txt\ndocs/**/gen.txt\n\\#hash.txt\n")
	put("src/.ignore", "secret_*.txt\n")
	put("src/sub/.gitignore", "local.txt\n")
	for _, f := range []string{
		"a.txt", "x.log", "keep.log", "build/out.txt", "src/build/out.txt", "rootonly.txt", "src/rootonly.txt",
		"docs/a/b/gen.txt", "docs/gen.txt", "docs/other/gen.txt.bak", "#hash.txt", "excluded.txt", "src/secret_1.txt", "src/ok.txt",
		"src/sub/local.txt", "src/sub/other.txt", "x.global", "notbuild/build",
	} {
		put(f, "needle\n")
	}
	// An ignore file that is a symlink is not read: a repository cannot
	// point its .gitignore at a file elsewhere.
	outside := filepath.Join(t.TempDir(), "all")
	require.NoError(t, os.WriteFile(outside, []byte("*\n"), 0o644))
	put("linked/kept.txt", "needle\n")
	require.NoError(t, os.Symlink(outside, filepath.Join(repo, "linked", ".gitignore")))
	f, err := NewLocalFS(policy.FS{Roots: []string{repo}, DeniedPathPrefixes: policy.DefaultDeniedPrefixes()})
	require.NoError(t, err)
	defer f.Close()
	rels := func(paths []string, base string) []string {
		var out []string
		for _, p := range paths {
			r, _ := filepath.Rel(base, p)
			if r != "xdg/git/ignore" && !slices.Contains(out, filepath.ToSlash(r)) {
				out = append(out, filepath.ToSlash(r))
			}
		}
		slices.Sort(out)
		return out
	}
	grep := func(dir string, all bool) []string {
		m, _, err := f.Grep(context.Background(), dir, GrepOptions{Pattern: "needle", IncludeIgnored: all})
		require.NoError(t, err)
		var paths []string
		for _, x := range m {
			paths = append(paths, x.Path)
		}
		return rels(paths, dir)
	}
	want := []string{"a.txt", "docs/other/gen.txt.bak", "keep.log", "linked/kept.txt", "notbuild/build", "src/ok.txt", "src/rootonly.txt", "src/sub/other.txt"}
	assert.Equal(t, want, grep(repo, false))
	assert.Equal(t, []string{"ok.txt", "rootonly.txt", "sub/other.txt"}, grep(filepath.Join(repo, "src"), false),
		"rules of the directories above the searched one apply too")
	assert.Len(t, grep(repo, true), 19, "include ignored: everything")
	paths, _, err := f.GlobWith(context.Background(), repo, "**/*.txt", GlobOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a.txt", "linked/kept.txt", "src/ok.txt", "src/rootonly.txt", "src/sub/other.txt"}, rels(paths, repo))
}

// TestFastIgnoreRulesAgreeWithTheirRegexps: the rules matched without a
// regexp (plain names and paths, one "*") match exactly what their
// regexps match, on generated patterns and paths.
func TestFastIgnoreRulesAgreeWithTheirRegexps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", ".", "/", "*", "é"}
	gen := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	fast := 0
	for range 3000 {
		pattern := gen(1 + r.IntN(5))
		var rule ignoreRule
		if !rule.fastRule(pattern) {
			continue
		}
		fast++
		re := regexp.MustCompile("^" + ignoreRegexp(pattern) + "$")
		for range 30 {
			subject := gen(r.IntN(7))
			if strings.Contains(subject, "*") {
				continue
			}
			require.Equal(t, re.MatchString(subject), rule.matches(subject), "pattern %q subject %q", pattern, subject)
		}
		// Subjects built from the pattern, so that matches are common.
		for _, fill := range []string{"", "a", "ab", "a/b", "/"} {
			subject := strings.Replace(pattern, "*", fill, 1)
			require.Equal(t, re.MatchString(subject), rule.matches(subject), "pattern %q subject %q", pattern, subject)
		}
	}
	require.Greater(t, fast, 500)
	for _, p := range []string{"a?b", "[ab]", `\#x`, "a**", "**/a", "*a*", "a\xff"} { // "a\xff": the regexp refuses invalid UTF-8
		var rule ignoreRule
		require.False(t, rule.fastRule(p), p)
	}
}
