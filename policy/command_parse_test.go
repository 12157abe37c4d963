package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeSystem is a hermetic command world: bin is the fixed PATH, work is
// the cwd (it holds its own ./git and ./ls), evil holds look-alike
// binaries outside PATH.
type fakeSystem struct {
	root, bin, work, evil string
	look                  func(string) (string, error)
}

var fakeBins = []string{
	"ls", "git", "go", "rm", "curl", "sh", "bash", "zsh", "dash", "fish", "env",
	"xargs", "find", "sudo", "doas", "timeout", "nice", "nohup", "stdbuf",
	"python3", "python", "python3.12", "node", "perl", "ruby", "awk", "sed",
	"head", "tee", "cat", "make", "tar", "ssh", "rsync", "strace", "busybox",
	"setsid", "chroot", "ionice", "watch", "parallel", "vim", "grep", "wc",
	"echo", "true", "test", "chmod", "cp", "mv", "wget", "nc", "file",
}

func newFakeSystem(t testing.TB) fakeSystem {
	t.Helper()
	root := t.TempDir()
	fs := fakeSystem{
		root: root,
		bin:  filepath.Join(root, "bin"),
		work: filepath.Join(root, "work"),
		evil: filepath.Join(root, "tmp", "x"),
	}
	for _, d := range []string{fs.bin, fs.work, fs.evil, filepath.Join(fs.work, "x")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	exe := func(p string) {
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	}
	for _, b := range fakeBins {
		exe(filepath.Join(fs.bin, b))
	}
	for _, b := range []string{"git", "ls", "go"} {
		exe(filepath.Join(fs.work, b))
		exe(filepath.Join(fs.evil, b))
	}
	exe(filepath.Join(fs.work, "x", "git"))
	require.NoError(t, os.WriteFile(filepath.Join(fs.bin, "notexec"), nil, 0o644))
	fs.look = NewLookPath(fs.bin, fs.work)
	return fs
}

func (fs fakeSystem) parse(t testing.TB, line string) CommandLine {
	t.Helper()
	cl, err := ParseCommandLine(line, fs.look)
	require.NoError(t, err, "line %q", line)
	return cl
}

func names(cl CommandLine) []string {
	var out []string
	for _, c := range cl.Commands {
		out = append(out, c.Name)
	}
	return out
}

func TestParseCommandLineAcceptsWhitelistWithoutRisk(t *testing.T) {
	fs := newFakeSystem(t)
	tests := []struct {
		name  string
		line  string
		names []string
	}{
		{"simple command", "ls", []string{"ls"}},
		{"args", "ls -la src", []string{"ls"}},
		{"semicolon list", "ls; git status", []string{"ls", "git"}},
		{"and", "go test ./... && git status", []string{"go", "git"}},
		{"or", "ls || git status", []string{"ls", "git"}},
		{"pipe", "git status | head -n 5", []string{"git", "head"}},
		{"pipe all", "go test ./... |& head", []string{"go", "head"}},
		{"newline separator", "ls\ngit status\n", []string{"ls", "git"}},
		{"single quotes", "grep 'a b' file", []string{"grep"}},
		{"double quotes literal", `grep "a b" file`, []string{"grep"}},
		{"escaped chars in double quotes", `grep "a\"b\$c" file`, []string{"grep"}},
		{"backslash escapes", `grep a\ b file`, []string{"grep"}},
		{"quoted argv0", `"git" status`, []string{"git"}},
		{"split-quoted argv0", `g'i't status`, []string{"git"}},
		{"escaped argv0", `\git status`, []string{"git"}},
		{"stderr to stdout", "go test ./... 2>&1", []string{"go"}},
		{"stdout to stderr", "ls 1>&2", []string{"ls"}},
		{"stdout to dev null", "ls >/dev/null", []string{"ls"}},
		{"stderr to dev null", "ls 2>/dev/null", []string{"ls"}},
		{"both to dev null", "ls &>/dev/null", []string{"ls"}},
		{"stdin from dev null", "cat </dev/null", []string{"cat"}},
		{"time keyword", "time go test ./...", []string{"go"}},
		{"comment", "ls # list", []string{"ls"}},
		{"line continuation", "ls \\\n -la", []string{"ls"}},
		{"harmless builtin", "echo hi && pwd && true", []string{"echo", "pwd", "true"}},
		{"cd then PATH command", "cd sub && go test ./...", []string{"cd", "go"}},
		{"quoted glob characters", `grep '*' file "[x]" \?`, []string{"grep"}},
		{"test bracket is not a glob", "[ -f x ] && ls", []string{"[", "ls"}},
		{"lone bracket in args", "grep a[ file", []string{"grep"}},
		{"sed print", "sed -n 1,10p main.go", []string{"sed"}},
		{"find without actions", "find . -name x -type f", []string{"find"}},
		{"git read-only", "git --no-pager log --oneline", []string{"git"}},
		{"shell script file", "bash ./scripts/test.sh", []string{"bash"}},
		{"python script", "python3 tool.py --flag", []string{"python3"}},
		{"awk print", "awk '{print $1}' file", []string{"awk"}},
		{"empty line", "", nil},
		{"only comment", "# nothing", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := fs.parse(t, tt.line)
			require.Empty(t, cl.Risks, "line %q", tt.line)
			require.Equal(t, tt.names, names(cl))
			require.Equal(t, tt.line, cl.Source)
		})
	}
}

func TestParseCommandLineQuoteRemovalYieldsWordsAsTheShellSeesThem(t *testing.T) {
	fs := newFakeSystem(t)
	cl := fs.parse(t, `g'i't "st"atus a\ b "x\"y" 'q\n'`)
	require.Len(t, cl.Commands, 1)
	c := cl.Commands[0]
	require.Equal(t, "git", c.Name)
	require.Equal(t, filepath.Join(fs.bin, "git"), c.Resolved)
	require.Equal(t, []string{"status", "a b", `x"y`, `q\n`}, c.Args)
}

func TestParseCommandLineKeyIsProgramLeadingOptionsAndFirstOperand(t *testing.T) {
	fs := newFakeSystem(t)
	bin := func(n string) string { return filepath.Join(fs.bin, n) }
	tests := []struct{ line, key string }{
		{"ls", bin("ls")},
		{"ls -la", bin("ls") + " -la"},
		{"ls -la src other", bin("ls") + " -la src"},
		{"go test ./...", bin("go") + " test"},
		{"go test -run X ./pkg", bin("go") + " test"},
		{"git status --short", bin("git") + " status"},
		{"git -C /x status", bin("git") + " -C /x"},
		{"python3 -m pytest -x", bin("python3") + " -m pytest"},
		{"ls -- -x", bin("ls") + " --"},
		{"./git status", filepath.Join(fs.work, "git") + " status"},
		{"nosuchprog a b", "nosuchprog a"},
		{"echo hi", "echo hi"},
		{"go run ./cmd/x -v", bin("go") + " run ./cmd/x"},
		{"npm run -s build --watch", "npm run -s build"},
		{"make test", bin("make") + " test"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cl := fs.parse(t, tt.line)
			require.Len(t, cl.Commands, 1)
			require.Equal(t, tt.key, cl.Commands[0].Key)
		})
	}
}

func TestParseCommandLineFlagsEveryRiskClassWithReason(t *testing.T) {
	fs := newFakeSystem(t)
	tests := []struct {
		name   string
		line   string
		reason string // substring of one Risk
		names  []string
	}{
		{"command substitution", "ls $(rm -rf /)", "command substitution", []string{"rm", "ls"}},
		{"backticks", "ls `rm -rf /`", "command substitution", []string{"rm", "ls"}},
		{"substitution in double quotes", `ls "$(rm x)"`, "command substitution", []string{"rm", "ls"}},
		{"process substitution in", "cat <(rm x)", "process substitution", []string{"rm", "cat"}},
		{"process substitution out", "ls >(rm x)", "process substitution", []string{"rm", "ls"}},
		{"arithmetic expansion", "ls $((1+1))", "arithmetic expansion", []string{"ls"}},
		{"old arithmetic expansion", "ls $[1+1]", "arithmetic expansion", []string{"ls"}},
		{"parameter expansion in args", "ls $HOME", "parameter expansion $HOME", []string{"ls"}},
		{"braced parameter expansion", "ls ${HOME}", "parameter expansion", []string{"ls"}},
		{"nested substitution in parameter", `ls "${x:-$(rm y)}"`, "command substitution", []string{"rm", "ls"}},
		{"parameter expansion in argv0", "$CMD status", "command name comes from parameter expansion", []string{"$CMD"}},
		{"redirect to file", "ls > out.txt", "redirection", []string{"ls"}},
		{"append to file", "ls >> ~/.bashrc", "redirection", []string{"ls"}},
		{"read from file", "cat < /etc/shadow", "redirection", []string{"cat"}},
		{"read-write redirect", "ls <> f", "redirection", []string{"ls"}},
		{"dup to file", "ls >&file", "redirection", []string{"ls"}},
		{"clobber", "ls >| f", "redirection", []string{"ls"}},
		{"close fd", "ls >&-", "redirection", []string{"ls"}},
		{"named fd", "ls {fd}>x", "redirection", []string{"ls"}},
		{"heredoc", "cat <<EOF\nhi\nEOF", "here-document", []string{"cat"}},
		{"heredoc with substitution", "cat <<EOF\n$(rm x)\nEOF", "command substitution", []string{"cat", "rm"}},
		{"here-string", "cat <<< hi", "here-string", []string{"cat"}},
		{"assignment prefix", "FOO=1 ls", "assignment FOO", []string{"ls"}},
		{"bare assignment", "FOO=1", "assignment FOO", nil},
		{"export", "export PATH=.", "export changes", nil},
		{"declare", "declare -x A=1", "declare changes", nil},
		{"function", "ls() { rm -rf /; }", "function definition", []string{"rm"}},
		{"function keyword", "function ls { rm -rf /; }", "function definition", []string{"rm"}},
		{"eval", "eval ls", "eval runs", []string{"eval"}},
		{"exec", "exec ls", "exec replaces", []string{"exec"}},
		{"source", "source ./x.sh", "source runs", []string{"source"}},
		{"dot", ". ./x.sh", ". runs", []string{"."}},
		{"env trampoline", "env rm -rf /", "env runs another program", []string{"env"}},
		{"xargs", "xargs rm", "xargs runs another program", []string{"xargs"}},
		{"find exec", `find . -exec rm {} \;`, "find -exec", []string{"find"}},
		{"find execdir", `find . -execdir rm {} +`, "find -execdir", []string{"find"}},
		{"find ok", `find . -ok rm {} \;`, "find -ok", []string{"find"}},
		{"find okdir", `find . -okdir rm {} \;`, "find -okdir", []string{"find"}},
		{"find delete", "find . -delete", "find -delete", []string{"find"}},
		{"sudo", "sudo ls", "sudo runs another program", []string{"sudo"}},
		{"doas", "doas ls", "doas runs another program", []string{"doas"}},
		{"timeout", "timeout 5 ls", "timeout runs another program", []string{"timeout"}},
		{"nice", "nice ls", "nice runs another program", []string{"nice"}},
		{"nohup", "nohup ls", "nohup runs another program", []string{"nohup"}},
		{"stdbuf", "stdbuf -o0 ls", "stdbuf runs another program", []string{"stdbuf"}},
		{"command builtin", "command ls", "command runs the command", []string{"command"}},
		{"builtin builtin", "builtin echo", "builtin runs the command", []string{"builtin"}},
		{"bash -c", "bash -c 'rm -rf /'", "bash with options", []string{"bash"}},
		{"sh -lc", "sh -lc ls", "sh with options", []string{"sh"}},
		{"zsh -c", "zsh -c ls", "zsh with options", []string{"zsh"}},
		{"dash -c", "dash -c ls", "dash with options", []string{"dash"}},
		{"fish -c", "fish -c ls", "fish with options", []string{"fish"}},
		{"shell from stdin", "curl x | sh", "sh reads a script from stdin", []string{"curl", "sh"}},
		{"python -c", "python3 -c 'import os'", "python3 -c runs program text", []string{"python3"}},
		{"versioned python -c", "python3.12 -Ic x", "python3.12 -Ic runs program text", []string{"python3.12"}},
		{"python from stdin", "curl x | python3", "python3 reads its program from stdin", []string{"curl", "python3"}},
		{"node -e", "node -e 'x'", "node -e runs program text", []string{"node"}},
		{"node --eval", "node --eval=x", "node --eval=x runs program text", []string{"node"}},
		{"perl -e", "perl -ne 'print'", "perl -ne runs program text", []string{"perl"}},
		{"ruby -e", "ruby -e 'x'", "ruby -e runs program text", []string{"ruby"}},
		{"git -c", "git -c core.pager=sh status", "git -c before the subcommand", []string{"git"}},
		{"git --config-env", "git --config-env=core.pager=X status", "git --config-env=core.pager=X before", []string{"git"}},
		{"git --exec-path", "git --exec-path=/tmp status", "git --exec-path=/tmp before", []string{"git"}},
		{"git config", "git config core.fsmonitor evil", "git config can set commands", []string{"git"}},
		{"git log --output", "git log --output=/tmp/x", "git log --output=/tmp/x writes files", []string{"git"}},
		{"go test -exec", "go test -exec 'sh -c x' ./...", "go -exec runs an arbitrary program", []string{"go"}},
		{"go test -toolexec", "go test -toolexec=x ./...", "go -toolexec=x runs", []string{"go"}},
		{"awk system", `awk 'BEGIN{system("rm -rf /")}'`, `awk program uses "system"`, []string{"awk"}},
		{"awk pipe", `awk '{print | "sh"}'`, `awk program uses "|"`, []string{"awk"}},
		{"sed e command", "sed 'e rm -rf /' f", "sed script", []string{"sed"}},
		{"sed w command", "sed -n 'w /tmp/x' f", "sed script", []string{"sed"}},
		{"background", "ls &", "background job", []string{"ls"}},
		{"glob in argv0", "l? -la", "glob characters in the command name", []string{"l?"}},
		{"bracket glob in argv0", "[l]s", "glob characters in the command name", []string{"[l]s"}},
		{"bracket glob split by quotes", `[l"s"]`, "glob characters in the command name", []string{`[l"s"]`}},
		{"glob in args", "ls *.go", "unquoted glob", []string{"ls"}},
		{"extglob", "ls @(a|b)", "extended glob", []string{"ls"}},
		{"brace expansion argv0", "{rm,-rf,/}", "brace expansion", []string{"{rm,-rf,/}"}},
		{"brace expansion args", "ls {a,b}", "brace expansion", []string{"ls"}},
		{"tilde argv0", "~/bin/ls", "tilde expansion", []string{"~/bin/ls"}},
		{"ansi-c quoting", `ls $'\x3b'`, "ANSI-C quoting", []string{"ls"}},
		{"locale quoting", `ls $"x"`, "locale quoting", []string{"ls"}},
		{"subshell", "(ls)", "subshell", []string{"ls"}},
		{"group", "{ ls; }", "command group", []string{"ls"}},
		{"if", "if ls; then rm x; fi", "control flow (if)", []string{"ls", "rm"}},
		{"elif else", "if ls; then :; elif git status; then :; else rm x; fi", "control flow (if)", []string{"ls", ":", "git", ":", "rm"}},
		{"while", "while ls; do rm x; done", "control flow (while", []string{"ls", "rm"}},
		{"until", "until ls; do rm x; done", "control flow (while", []string{"ls", "rm"}},
		{"for", "for f in a b; do rm $f; done", "control flow (for", []string{"rm"}},
		{"c-style for", "for ((i=0;i<3;i++)); do ls; done", "control flow (for", []string{"ls"}},
		{"case", "case x in x) rm -rf /;; esac", "control flow (case)", []string{"rm"}},
		{"negation", "! ls", "negation", []string{"ls"}},
		{"arithmetic command", "(( a[$(rm x)] ))", "arithmetic evaluation", []string{"rm"}},
		{"let", "let x=1", "arithmetic evaluation", nil},
		{"double brackets", "[[ -f x ]]", "[[ … ]]", nil},
		{"coproc", "coproc ls", "coproc", []string{"ls"}},
		{"test -v subscript", `test -v 'a[$(rm x)]'`, "test -v evaluates an array subscript", []string{"test"}},
		{"read subscript", `read 'a[$(rm x)]'`, "read assigns to variables", []string{"read"}},
		{"printf -v", `printf -v 'a[$(rm x)]' x`, "printf -v assigns", []string{"printf"}},
		{"alias", "alias ls='rm -rf /'", "aliases change", []string{"alias"}},
		{"hash -p", "hash -p /tmp/evil ls", "hash -p binds", []string{"hash"}},
		{"trap", "trap 'rm -rf /' EXIT", "trap registers", []string{"trap"}},
		{"set", "set -o vi", "set changes how the shell", []string{"set"}},
		{"relative name after cd", "cd /tmp && ./git status", "after cd/pushd/popd", []string{"cd", "./git"}},
		{"non-ASCII name", "ｌｓ", "non-ASCII or control characters", []string{"ｌｓ"}},
		{"control characters", "ls\r\nrm x", "control characters", []string{"ls", "rm"}},
		{"bidi override in args", "ls '\u202e/cte'", "bidirectional-control", []string{"ls"}},
		{"zero-width space in args", "git status \u200b", "invisible", []string{"git"}},
		{"empty name", "'' x", "empty command name", []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := fs.parse(t, tt.line)
			require.NotEmpty(t, cl.Risks, "line %q", tt.line)
			found := false
			for _, r := range cl.Risks {
				if strings.Contains(r, tt.reason) {
					found = true
				}
			}
			require.True(t, found, "line %q: no risk mentions %q in %q", tt.line, tt.reason, cl.Risks)
			require.Equal(t, tt.names, names(cl), "line %q", tt.line)
		})
	}
}

func TestParseCommandLineRejectsUnparsableLines(t *testing.T) {
	fs := newFakeSystem(t)
	for _, line := range []string{
		"ls 'unterminated",
		`ls "unterminated`,
		"ls |",
		"ls &&",
		"ls ;;",
		"$(",
		"ls )",
		"if ls; then",
		"ls\x00; rm -rf /",
		"ls \xff",
	} {
		t.Run(line, func(t *testing.T) {
			_, err := ParseCommandLine(line, fs.look)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrCommandParse), "%v", err)
		})
	}
}

func TestParseCommandLineBoundsLengthAndNesting(t *testing.T) {
	fs := newFakeSystem(t)
	tests := map[string]string{
		"too long":                  "ls " + strings.Repeat("a", MaxCommandLineBytes),
		"substitutions nested deep": strings.Repeat("$(", MaxCommandNesting+1) + "ls" + strings.Repeat(")", MaxCommandNesting+1),
		"subshells nested deep":     strings.Repeat("( ", MaxCommandNesting+1) + "ls" + strings.Repeat(" )", MaxCommandNesting+1),
		"huge nesting":              strings.Repeat("$(", 20000) + "ls" + strings.Repeat(")", 20000),
	}
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			cl, err := ParseCommandLine(line, fs.look)
			require.ErrorIs(t, err, ErrCommandParse)
			require.Empty(t, cl.Commands)
		})
	}
	t.Run("nesting within the limit parses", func(t *testing.T) {
		n := MaxCommandNesting - 1
		cl := fs.parse(t, strings.Repeat("( ", n)+"ls"+strings.Repeat(" )", n))
		require.Equal(t, []string{"ls"}, names(cl))
	})
}

func TestParseCommandLineNilLookPathResolvesNothing(t *testing.T) {
	cl, err := ParseCommandLine("ls -la", nil)
	require.NoError(t, err)
	require.Len(t, cl.Commands, 1)
	require.Empty(t, cl.Commands[0].Resolved)
	require.Equal(t, "ls -la", cl.Commands[0].Key)
}

func TestParseCommandLineDoesNotResolveBuiltins(t *testing.T) {
	fs := newFakeSystem(t)
	// fakeBins has echo, true and test on PATH; bash runs its builtins.
	cl := fs.parse(t, "echo x; true; test -f x")
	for _, c := range cl.Commands {
		require.Empty(t, c.Resolved, c.Name)
	}
}

func TestNewLookPathResolvesOnlyThroughFixedPathAndSlashNamesAgainstCwd(t *testing.T) {
	fs := newFakeSystem(t)
	look := NewLookPath(fs.bin+"::.:relative", fs.work)
	tests := []struct {
		name, in, want string
	}{
		{"bare name in PATH", "git", filepath.Join(fs.bin, "git")},
		{"dot slash is cwd, not PATH", "./git", filepath.Join(fs.work, "git")},
		{"relative dir name", "x/git", filepath.Join(fs.work, "x", "git")},
		{"absolute outside PATH", filepath.Join(fs.evil, "git"), filepath.Join(fs.evil, "git")},
		{"cleaned", fs.bin + "/../work/./git", filepath.Join(fs.work, "git")},
		{"missing", "nosuch", ""},
		{"not executable", "notexec", ""},
		{"directory", fs.bin, ""},
		{"empty", "", ""},
		{"NUL", "git\x00x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := look(tt.in)
			if tt.want == "" {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	t.Run("empty and relative PATH entries are never searched", func(t *testing.T) {
		// ls exists in cwd (work) but not in bin2: "." and "" must not find it.
		bin2 := t.TempDir()
		look := NewLookPath(bin2+"::.", fs.work)
		_, err := look("ls")
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("default path", func(t *testing.T) {
		look := NewLookPath("", "/")
		if _, err := os.Stat("/bin/sh"); err != nil {
			t.Skip("no /bin/sh")
		}
		got, err := look("sh")
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(got, "/sh"))
	})
}

// ctx is the context commands of the fake system run in: the cwd is work,
// the PATH is bin, and a path operand is inside when it stays lexically
// under work (no links in this world).
func (fs fakeSystem) ctx() CommandContext {
	return CommandContext{Dir: fs.work, Path: fs.bin, Operand: func(dir, w string) OperandInfo {
		if strings.HasPrefix(w, "~") {
			return OperandInfo{}
		}
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		rel, err := filepath.Rel(fs.work, filepath.Clean(p))
		if err != nil || !(rel == "." || filepath.IsLocal(rel)) {
			return OperandInfo{}
		}
		fi, err := os.Stat(p)
		return OperandInfo{Inside: true, Dir: err == nil && fi.IsDir()}
	}}
}
