package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden/seatbelt")

// goldenPolicy is a workspace as the agent configures it, with fixed
// paths so the profiles are the same on every machine.
func goldenPolicy() Policy {
	return Policy{
		WritableRoots: []string{"/Users/dev/src/app", "/Users/dev/src/lib"},
		ExtraWritable: []string{"/Users/dev/.cache", "/Users/dev/go/pkg/mod", "/Users/dev/.npm"},
		DeniedPaths: []string{"/Users/dev/.ssh", "/Users/dev/.aws", "/Users/dev/.netrc",
			"/Users/dev/.config/acp-agent", "/Users/dev/.local/state/acp-agent/sessions"},
		TempDir: "/private/var/folders/xy/T/acp-agent-cmd-1",
	}
}

// The profile for every session mode, pinned by golden files. read-only
// runs no commands, so it has no profile. default and accept-edits keep
// the network off; full-access turns it on unless the user set
// sandbox.network false; sandbox.allowGitWrites lifts .git's protection.
func TestSeatbeltProfileGoldenForEveryMode(t *testing.T) {
	modes := map[string]func(*Policy){
		"default":                 func(*Policy) {},
		"accept-edits":            func(*Policy) {},
		"full-access":             func(p *Policy) { p.Network = true },
		"full-access-network-off": func(*Policy) {},
		"allow-git-writes":        func(p *Policy) { p.AllowGitWrites = true },
		"no-secrets-configured":   func(p *Policy) { p.DeniedPaths = nil },
	}
	for name, mutate := range modes {
		t.Run(name, func(t *testing.T) {
			p := goldenPolicy()
			mutate(&p)
			got, err := SeatbeltProfile(p)
			require.NoError(t, err)
			_, err = parseSBPL(got)
			require.NoError(t, err, "the profile is well-formed")
			path := filepath.Join("..", "..", "testdata", "golden", "seatbelt", name+".sb")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./runtime/sandbox -run Golden -update")
			assert.Equal(t, string(want), got)
		})
	}
}

// What the profile grants, read by the evaluator rather than by eye.
func TestSeatbeltProfileGrantsWhatThePolicySays(t *testing.T) {
	p := goldenPolicy()
	prof, err := SeatbeltProfile(p)
	require.NoError(t, err)
	sb, err := parseSBPL(prof)
	require.NoError(t, err)
	for _, c := range []struct {
		path        string
		read, write bool
	}{
		{"/Users/dev/src/app/main.go", true, true},
		{"/Users/dev/src/app/.git/config", true, false},
		{"/Users/dev/src/app/.GIT/hooks/pre-commit", true, false},
		{"/Users/dev/src/app-other/x", true, false},
		{"/Users/dev/src/lib/x.go", true, true},
		{"/Users/dev/.ssh/id_ed25519", false, false},
		{"/Users/dev/.SSH/id_ed25519", false, false},
		{"/Users/dev/.sshd/x", true, false},
		{"/Users/dev/.netrc", false, false},
		{"/Users/dev/.config/acp-agent/config.json", false, false},
		{"/Users/dev/.cache/go-build/x", true, true},
		{"/private/var/folders/xy/T/acp-agent-cmd-1/t", true, true},
		{"/etc/hosts", true, false},
		{"/dev/null", true, true},
		{"/Users/dev/Documents/x", true, false},
	} {
		assert.Equal(t, c.read, sb.allows("file-read-data", c.path), "read %s", c.path)
		assert.Equal(t, c.write, sb.allows("file-write-data", c.path), "write %s", c.path)
	}
	assert.False(t, sb.allows("network-outbound", ""), "network off")
	// Protected paths: read, never written or created, in a root too.
	q := goldenPolicy()
	q.WritableRoots = append(q.WritableRoots, "/Users/dev")
	q.ProtectedPaths = []string{"/Users/dev/.zshrc", "/Users/dev/.config/git"}
	prof, err = SeatbeltProfile(q)
	require.NoError(t, err)
	sb, err = parseSBPL(prof)
	require.NoError(t, err)
	for _, c := range []struct {
		path  string
		write bool
	}{
		{"/Users/dev/.zshrc", false},
		{"/Users/dev/.ZSHRC", false},
		{"/Users/dev/.config/git/config", false},
		{"/Users/dev/.zshrc.bak", true},
		{"/Users/dev/notes.txt", true},
	} {
		assert.True(t, sb.allows("file-read-data", c.path), "read %s", c.path)
		assert.Equal(t, c.write, sb.allows("file-write-data", c.path), "write %s", c.path)
	}
	p.Network = true
	prof, _ = SeatbeltProfile(p)
	sb, _ = parseSBPL(prof)
	assert.True(t, sb.allows("network-outbound", ""), "network on")
}

// The secrets files under the roots (.env, .env.<anything> at any depth,
// in any case) are neither read nor written by confined commands, as the
// Linux sandbox masks them; templates and names that only start like one
// stay open, and so does what is inside a .env directory (a virtualenv).
func TestSeatbeltProfileDeniesTheRootsEnvFiles(t *testing.T) {
	prof, err := SeatbeltProfile(goldenPolicy())
	require.NoError(t, err)
	sb, err := parseSBPL(prof)
	require.NoError(t, err)
	for _, c := range []struct {
		path   string
		secret bool
	}{
		{"/Users/dev/src/app/.env", true},
		{"/Users/dev/src/app/.ENV", true},
		{"/Users/dev/src/app/.env.local", true},
		{"/Users/dev/src/app/.Env.Production", true},
		{"/Users/dev/src/app/deep/dir/.env", true},
		{"/Users/dev/src/lib/pkg/.env.test", true},
		{"/Users/dev/src/app/.env.example", false},
		{"/Users/dev/src/app/sub/.ENV.SAMPLE", false},
		{"/Users/dev/src/app/.env.template", false},
		{"/Users/dev/src/app/.env.dist", false},
		{"/Users/dev/src/app/.env.example.bak", true},
		{"/Users/dev/src/app/.envrc", false},
		{"/Users/dev/src/app/x.env", false},
		{"/Users/dev/src/app/.env/bin/python", false},
	} {
		assert.Equal(t, !c.secret, sb.allows("file-read-data", c.path), "read %s", c.path)
		assert.Equal(t, !c.secret, sb.allows("file-write-data", c.path), "write %s", c.path)
	}
	assert.True(t, sb.allows("file-read-data", "/Users/dev/src/app-other/.env"), "a .env outside the roots is not the roots' secret (as on Linux)")
}

// Denied paths match in any letter case beyond ASCII too: a user named
// José has /Users/josé/.ssh, which a case-insensitive volume also opens
// as /Users/JOSÉ/.ssh.
func TestSeatbeltProfileFoldsTheCaseOfEveryLetter(t *testing.T) {
	p := goldenPolicy()
	p.DeniedPaths = []string{"/Users/josé/.ssh", "/Users/dev/Ωmega"}
	prof, err := SeatbeltProfile(p)
	require.NoError(t, err)
	sb, err := parseSBPL(prof)
	require.NoError(t, err)
	for _, path := range []string{"/Users/josé/.ssh/id_rsa", "/Users/JOSÉ/.SSH/id_rsa", "/Users/Josė/.ssh", "/Users/dev/ωMEGA/x"} {
		if path == "/Users/Josė/.ssh" {
			assert.True(t, sb.allows("file-read-data", path), "%s is another name (ė is not é)", path)
			continue
		}
		assert.False(t, sb.allows("file-read-data", path), "read %s", path)
	}
	assert.True(t, sb.allows("file-read-data", "/Users/jose/.ssh/id_rsa"), "an unaccented name is another directory")
}

// Paths the profile cannot say exactly are refused, never mangled.
func TestSeatbeltProfileRefusesPathsItCannotHold(t *testing.T) {
	for _, bad := range []string{"relative/root", `/w/quote"d`, `/w/back\slash`, "/w/new\nline",
		`/w/x") (allow file-write* (subpath "/`, "/w/tab\there", "/w/del\x7f"} {
		for field, set := range map[string]func(*Policy){
			"root":      func(p *Policy) { p.WritableRoots = []string{bad} },
			"extra":     func(p *Policy) { p.ExtraWritable = []string{bad} },
			"denied":    func(p *Policy) { p.DeniedPaths = []string{bad} },
			"protected": func(p *Policy) { p.ProtectedPaths = []string{bad} },
			"temp":      func(p *Policy) { p.TempDir = bad },
		} {
			p := goldenPolicy()
			set(&p)
			_, err := SeatbeltProfile(p)
			assert.Error(t, err, "%s %q", field, bad)
		}
	}
	// What may be in a path is escaped for the regex, never ending it.
	p := goldenPolicy()
	p.DeniedPaths = []string{"/Users/dev/odd (dir) [x] {y} a+b*c?d|e^f$g.h"}
	prof, err := SeatbeltProfile(p)
	require.NoError(t, err)
	sb, err := parseSBPL(prof)
	require.NoError(t, err)
	assert.False(t, sb.allows("file-read-data", "/Users/dev/odd (dir) [x] {y} a+b*c?d|e^f$g.h/secret"))
	assert.True(t, sb.allows("file-read-data", "/Users/dev/odd (dir) [x] {y} aab*c?d|e^f$g.h/secret"), "+ is no operator")
}

// sbpl is a parsed profile: the allow rules after (deny default). The
// evaluator knows what SeatbeltProfile writes: operations with their
// SBPL wildcards, and the filters literal, subpath, regex, require-all,
// require-any and require-not. It refuses anything else, so a profile
// change it cannot judge fails the tests instead of passing them.
type sbpl struct{ rules []sbRule }

type sbRule struct {
	ops     []string
	filters []sexp // OR'ed; none means every object
}

type sexp struct {
	atom string // a symbol, or a string's value
	str  bool   // atom was a string (or #"regex")
	list []sexp
}

func parseSBPL(src string) (*sbpl, error) {
	toks := tokenizeSBPL(src)
	var forms []sexp
	for len(toks) > 0 {
		var e sexp
		var err error
		e, toks, err = readSexp(toks)
		if err != nil {
			return nil, err
		}
		forms = append(forms, e)
	}
	sb := &sbpl{}
	sawDeny := false
	for _, f := range forms {
		if len(f.list) == 0 {
			return nil, fmt.Errorf("unexpected form %+v", f)
		}
		switch head := f.list[0].atom; head {
		case "version":
		case "deny":
			if len(f.list) != 2 || f.list[1].atom != "default" {
				return nil, errors.New("only (deny default) is expected: the profile must not depend on rule order")
			}
			sawDeny = true
		case "allow":
			var r sbRule
			for _, x := range f.list[1:] {
				if x.list == nil && !x.str {
					r.ops = append(r.ops, x.atom)
				} else {
					r.filters = append(r.filters, x)
				}
			}
			sb.rules = append(sb.rules, r)
		default:
			return nil, fmt.Errorf("unexpected form %q", head)
		}
	}
	if !sawDeny {
		return nil, errors.New("no (deny default)")
	}
	return sb, nil
}

func tokenizeSBPL(src string) []string {
	var toks []string
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == ';':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '(' || c == ')':
			toks = append(toks, string(c))
			i++
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '"' || (c == '#' && i+1 < len(src) && src[i+1] == '"'):
			j := i + 1
			if c == '#' {
				j++
			}
			for j < len(src) && src[j] != '"' {
				j++
			}
			toks = append(toks, src[i:j+1])
			i = j + 1
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \n\t()", rune(src[j])) {
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		}
	}
	return toks
}

func readSexp(toks []string) (sexp, []string, error) {
	if len(toks) == 0 {
		return sexp{}, nil, errors.New("unexpected end")
	}
	t, rest := toks[0], toks[1:]
	switch {
	case t == "(":
		e := sexp{list: []sexp{}}
		for len(rest) > 0 && rest[0] != ")" {
			var x sexp
			var err error
			x, rest, err = readSexp(rest)
			if err != nil {
				return sexp{}, nil, err
			}
			e.list = append(e.list, x)
		}
		if len(rest) == 0 {
			return sexp{}, nil, errors.New("unclosed (")
		}
		return e, rest[1:], nil
	case t == ")":
		return sexp{}, nil, errors.New("unexpected )")
	case strings.HasPrefix(t, `#"`):
		return sexp{atom: "#" + t[2:len(t)-1], str: true}, rest, nil
	case strings.HasPrefix(t, `"`):
		return sexp{atom: t[1 : len(t)-1], str: true}, rest, nil
	}
	return sexp{atom: t}, rest, nil
}

// allows reports whether operation op on path is allowed. Operations
// match as SBPL's do: "file-read*" covers "file-read-data", "network*"
// covers "network-outbound".
func (sb *sbpl) allows(op, path string) bool {
	for _, r := range sb.rules {
		opOK := false
		for _, o := range r.ops {
			if o == op || (strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*"))) {
				opOK = true
			}
		}
		if !opOK {
			continue
		}
		if len(r.filters) == 0 {
			return true
		}
		for _, f := range r.filters {
			if matchFilter(f, path) {
				return true
			}
		}
	}
	return false
}

func matchFilter(f sexp, path string) bool {
	if len(f.list) == 0 {
		panic(fmt.Sprintf("filter %+v", f))
	}
	args := f.list[1:]
	switch f.list[0].atom {
	case "literal":
		return path == args[0].atom
	case "subpath":
		return within(args[0].atom, path)
	case "regex":
		return regexp.MustCompile(strings.TrimPrefix(args[0].atom, "#")).MatchString(path)
	case "require-not":
		return !matchFilter(args[0], path)
	case "require-all":
		for _, a := range args {
			if !matchFilter(a, path) {
				return false
			}
		}
		return true
	case "require-any":
		for _, a := range args {
			if matchFilter(a, path) {
				return true
			}
		}
		return false
	case "global-name", "target":
		return false // not a path filter
	}
	panic("unknown filter " + f.list[0].atom)
}
