package policy

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTerminalCheckAppliesDenyThenAllowToEveryCommand(t *testing.T) {
	fs := newFakeSystem(t)
	allow := []string{"ls", "git status", "go test", filepath.Join(fs.work, "x", "git"), "cd", "echo"}
	tests := []struct {
		name    string
		term    Terminal
		line    string
		deniedN string // "" = allowed
	}{
		{"nil allow list allows anything", Terminal{}, "rm -rf x", ""},
		{"empty allow list allows nothing", Terminal{AllowedCommands: []string{}}, "ls", "ls"},
		{"base name in PATH matches", Terminal{AllowedCommands: allow}, "ls -la", ""},
		{"prog sub prefix matches", Terminal{AllowedCommands: allow}, "git status --short", ""},
		{"prog sub prefix needs the sub", Terminal{AllowedCommands: allow}, "git log", "git"},
		{"prog sub prefix needs sub first", Terminal{AllowedCommands: allow}, "git -C x status", "git"},
		{"quote removal is the same program", Terminal{AllowedCommands: allow}, `"git" 'status'`, ""},
		{"dot-slash is a different program", Terminal{AllowedCommands: allow}, "./git status", "./git"},
		{"absolute path outside PATH is a different program", Terminal{AllowedCommands: allow}, filepath.Join(fs.evil, "git") + " status", filepath.Join(fs.evil, "git")},
		{"absolute path inside PATH matches base entry", Terminal{AllowedCommands: allow}, filepath.Join(fs.bin, "ls"), ""},
		{"absolute entry matches resolved path", Terminal{AllowedCommands: allow}, "x/git log", ""},
		{"unresolved non-builtin never matches", Terminal{AllowedCommands: []string{"nosuch"}}, "nosuch", "nosuch"},
		{"builtin matches bare entry", Terminal{AllowedCommands: allow}, "cd sub && echo hi", ""},
		{"every command must be allowed", Terminal{AllowedCommands: allow}, "ls && rm -rf /", "rm"},
		{"commands in substitutions are checked", Terminal{AllowedCommands: allow}, "ls $(rm -rf /)", "rm"},
		{"deny wins over allow", Terminal{AllowedCommands: allow, DeniedCommands: []string{"git status"}}, "git status", "git"},
		{"deny matches base name anywhere", Terminal{DeniedCommands: []string{"git"}}, "./git status", "./git"},
		{"deny matches look-alike outside PATH", Terminal{DeniedCommands: []string{"ls"}}, filepath.Join(fs.evil, "ls"), filepath.Join(fs.evil, "ls")},
		{"deny with args", Terminal{DeniedCommands: []string{"rm -rf"}}, "rm -rf /", "rm"},
		{"deny with args does not over-match", Terminal{DeniedCommands: []string{"rm -rf"}}, "rm -i x", ""},
		{"deny args match after leading options", Terminal{DeniedCommands: []string{"git push"}}, "git --no-pager push origin", "git"},
		{"deny args match in order only", Terminal{DeniedCommands: []string{"git push origin"}}, "git origin push", ""},
		{"deny by absolute path", Terminal{DeniedCommands: []string{filepath.Join(fs.bin, "rm")}}, "rm x", "rm"},
		{"deny checks nested commands", Terminal{DeniedCommands: []string{"rm"}}, "if ls; then rm x; fi", "rm"},
		// A runner's command is a command of the line: npm exec -- touch x
		// ran touch.
		{"deny sees npx's command", Terminal{DeniedCommands: []string{"rm"}}, "npx rm x", "rm"},
		{"deny sees npm exec's command after --", Terminal{DeniedCommands: []string{"rm"}}, "npm exec --offline -- rm x", "rm"},
		{"deny sees uv run's command", Terminal{DeniedCommands: []string{"rm"}}, "uv run rm x", "rm"},
		{"deny sees bundle exec's command", Terminal{DeniedCommands: []string{"rm"}}, "bundle exec rm x", "rm"},
		{"deny sees direnv exec's command", Terminal{DeniedCommands: []string{"rm"}}, "direnv exec . rm x", "rm"},
		{"deny sees a runner's runner", Terminal{DeniedCommands: []string{"rm"}}, "corepack pnpm exec rm x", "rm"},
		{"a runner's other command runs", Terminal{DeniedCommands: []string{"rm"}}, "npx -y prettier --write .", ""},
		// A runner option known to take a value: the word after the
		// value is the command.
		{"deny sees uv run's command after --with's value", Terminal{DeniedCommands: []string{"rm"}}, "uv run --with pkg rm x", "rm"},
		{"deny sees npx's command after -p's value", Terminal{DeniedCommands: []string{"rm"}}, "npx -p pkg rm x", "rm"},
		{"deny sees conda run's command after -n's value", Terminal{DeniedCommands: []string{"rm"}}, "conda run -n env rm x", "rm"},
		{"a value-taking runner option's value is not the command", Terminal{DeniedCommands: []string{"rm"}}, "uv run --with rm pytest", ""},
		// The runner's own options before its subcommand, one with a
		// value named like the subcommand.
		{"deny sees npm exec's command after npm --prefix", Terminal{DeniedCommands: []string{"rm"}}, "npm --prefix d exec -- rm x", "rm"},
		{"deny sees uv run's command after a value named run", Terminal{DeniedCommands: []string{"rm"}}, "uv --directory run run rm x", "rm"},
		{"deny sees pnpm exec's command after -C", Terminal{DeniedCommands: []string{"rm"}}, "pnpm -C d exec rm x", "rm"},
		{"npm run runs a script, not a command", Terminal{DeniedCommands: []string{"rm"}}, "npm run rm", ""},
		{"blank entries match nothing", Terminal{AllowedCommands: []string{"  "}}, "ls", "ls"},
		{"empty line runs nothing", Terminal{AllowedCommands: []string{}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.term.Path = fs.bin
			err := tt.term.Check(fs.parse(t, tt.line))
			if tt.deniedN == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrCommandDenied))
			require.Equal(t, "Command denied: "+tt.deniedN, err.Error())
			var de *CommandDeniedError
			require.ErrorAs(t, err, &de)
			require.Equal(t, tt.deniedN, de.Name)
		})
	}
}

// A runner's command that is itself a trampoline, or hidden behind an
// option that may take a value, is opaque: with a list, the line is
// refused with the reason.
func TestTerminalCheckRunnerCommandsThatAreNotKnown(t *testing.T) {
	fs := newFakeSystem(t)
	for line, why := range map[string]string{
		"npx sh -c 'rm x'":          "-c runs a command",
		"uv run --frob x rm y":      "uv --frob: the program it runs is not known",
		"uv --frob run rm y":        "uv --frob run: the program it runs is not known",
		"npm --frob x exec rm y":    "npm --frob x: the program it runs is not known",
		"uv run -- bash -c 'rm x'":  "bash with options",
		"nix-shell --run 'rm x'":    "nix-shell --run",
		"nix develop -c rm x":       "nix -c",
		"bun exec 'rm x'":           "bun exec runs a shell script",
		"mise exec node@20 -- rm x": "", // the command after -- is rm
		"pipenv run --frob rm x":    "pipenv --frob: the program it runs is not known",
	} {
		err := Terminal{DeniedCommands: []string{"rm"}, Path: fs.bin}.Check(fs.parse(t, line))
		require.Error(t, err, line)
		assert.Contains(t, err.Error(), why, line)
	}
}

// Everyday runner lines are remembered by "Always allow" (the runner's
// options that take a value are known), and what an approval covers is
// the runner's command exactly: approving npx prettier approves neither
// npx rm nor prettier with other arguments.
func TestCommandMemoryRemembersRunnerLinesExactly(t *testing.T) {
	fs := newFakeSystem(t)
	for line, notCovered := range map[string][]string{
		"npx prettier --write .":          {"npx rm -rf .", "npx prettier --write /", "prettier --write ..", "npx -y rm x"},
		"uv run --with pkg pytest -x":     {"uv run --with pkg rm -x", "uv run --with rm pytest -x"},
		"npx -p typescript tsc --noEmit":  {"npx -p typescript rm --noEmit", "npx -p rm tsc --noEmit"},
		"conda run -n env pytest":         {"conda run -n env rm"},
		"bundle exec rspec":               {"bundle exec rm", "bundle exec rspec x"},
		"npm --prefix web exec -- eslint": {"npm --prefix web exec -- rm"},
	} {
		m := &CommandMemory{}
		cl := fs.parse(t, line)
		require.Empty(t, cl.Risks, line)
		m.Remember(cl, fs.ctx(), DecisionAllow)
		require.Equal(t, DecisionAllow, m.Lookup(fs.parse(t, line), fs.ctx()), line)
		for _, other := range notCovered {
			require.NotEqual(t, DecisionAllow, m.Lookup(fs.parse(t, other), fs.ctx()), "%q approved %q", line, other)
		}
	}
}

// The sqlite3 shell, psql, mysql and wget run what a file or stdin says,
// not only their arguments; wget's other -e commands run nothing.
func TestProgramsReadingCommandsFromFilesOrStdin(t *testing.T) {
	fs := newFakeSystem(t)
	for line, risky := range map[string]bool{
		"printf '.shell rm x' | sqlite3 db": true, "sqlite3 db": true, "sqlite3 -init x.sql db 'select 1'": true,
		"sqlite3 --init x.sql db 'select 1'": true, "sqlite3 -cmd 'pragma x' db": true, "sqlite3 -separator , db": true,
		"sqlite3 db 'select 1'": false, "sqlite3 -bail db 'select 1'": false, "sqlite3 -separator , db 'select 1'": false,
		"sqlite3 -version": false,
		"psql -f x.sql":    true, "psql --file=x.sql": true, "psql --fi x.sql": true, "psql -Xf x.sql": true,
		"psql -c 'select 1'": false,
		// psql and mysql read commands from stdin without -c or -e, and
		// run a shell command for \! or system wherever they read them.
		"printf '\\! rm x' | psql db": true, "psql db": true, "psql -d db": true, "psql -dc": true, "psql < x.sql": true,
		"psql -Xc '\\! rm x'": true, "psql -qXc 'select 1'": false, "psql --comm='\\! rm x'": true, "psql -v 'x=\\! rm'": true,
		"psql -c 'select 1' -o '|rm x'": true, "psql -c 'select 1' --out='|rm x'": true, "psql -c 'select 1' -o out.txt": false,
		"psql --command 'select 1'": false, "psql -l": false, "psql --version": false, "psql -d db -c 'select 1'": false,
		"mysql -e 'system rm x'": true, "mysql --execute='select 1; SYSTEM rm x'": true, "mysql -Be '\\! rm x'": true,
		"mariadb --exec 'source x.sql'": true, "mysql db < dump.sql": true, "mysql -u root db": true, "mysql -uroot -D db": true,
		"mysql --pager=rm": true, "mysql --loose_pager=rm -e 'select 1'": true, "mysql --plugin-dir=. --default-auth=x -e 'select 1'": true,
		"mysql --defaults-file=x.cnf -e 'select 1'": true,
		"mysql -e 'select 1'":                       false, "mysql -u root -D db -e 'select 1'": false, "mysql -uroot -psecret db -e 'select 1'": false,
		"mariadb --execute='select 1'": false, "mysql --version": false,
		// A named command is the first word of a line or statement; the
		// same word in SQL is a column or a table.
		"mysql -e 'select source, tee from events'": false, "mysql -e 'select 1;\n  Pager less'": true,
		"mysql -e 'update t set edit = 1; source x.sql'": true, "mysql -e 'system(rm x)'": true,
		"mysql -e 'systems'": false, "mysql -e 'select * from system'": false,
		"sftp -b cmds host": true, "printf '!rm x' | sftp host": true, "groff -U -Tutf8 x.tr": true, "nroff -U x.1": true,
		"groff -UTutf8 x.tr": true, "groff -Tutf8 x.tr": false, "nroff -man x.1": false,
		"apt-get -o APT::Update::Pre-Invoke::=x update": true, "apt-get update -oDPkg::Pre-Invoke::=x": true,
		"apt --option=Dir::Bin::dpkg=x install y": true, "apt-get -c x.conf update": true, "apt-get -qy install y": false,
		"wget --config=x.rc http://x": true, "wget --conf x.rc http://x": true, "wget -e use_askpass=x http://x": true,
		"wget -e Use-AskPass=x http://x": true, "wget -qeuse_askpass=x http://x": true, "wget --exec 'useaskpass = x' http://x": true,
		"wget -e robots=off -r http://x": false, "wget -q -e https_proxy=http://p:3128 http://x": false,
		"wget --execute=robots=off http://x": false, "wget -O out http://x": false,
	} {
		cl := fs.parse(t, line)
		if risky {
			assert.NotEmpty(t, cl.Risks, line)
		} else {
			assert.Empty(t, cl.Risks, line)
		}
	}
}

func TestTerminalCheckBareEntriesTrustOnlyItsPath(t *testing.T) {
	fs := newFakeSystem(t)
	cl := fs.parse(t, "ls")
	// Resolved lies in fs.bin; with the default path fs.bin is not trusted.
	require.Error(t, Terminal{AllowedCommands: []string{"ls"}}.Check(cl))
	require.NoError(t, Terminal{AllowedCommands: []string{"ls"}, Path: fs.bin}.Check(cl))
}

// corpusCase is one line of testdata/commands/bypass.txt.
type corpusCase struct {
	class, line string
	lineNo      int
}

func loadCorpus(t *testing.T, name, evil string) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "commands", name))
	require.NoError(t, err)
	defer f.Close()
	var out []corpusCase
	class := ""
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			class = strings.TrimPrefix(line, "## ")
			continue
		case line == "" || line == "#" || strings.HasPrefix(line, "# "):
			continue
		case strings.HasPrefix(line, "q:"):
			line, err = strconv.Unquote(strings.TrimPrefix(line, "q:"))
			require.NoError(t, err, "%s:%d", name, n)
		}
		out = append(out, corpusCase{class: class, line: strings.ReplaceAll(line, "/tmp/x", evil), lineNo: n})
	}
	require.NoError(t, sc.Err())
	return out
}

// cannotAutoRun is the property every bypass attempt must have.
func cannotAutoRun(cl CommandLine, parseErr error, term Terminal) (bool, string) {
	if parseErr != nil {
		return true, "parse error"
	}
	if err := term.Check(cl); err != nil {
		return true, err.Error()
	}
	if len(cl.Risks) > 0 {
		return true, "risk: " + cl.Risks[0]
	}
	return false, ""
}

func rememberedMemory(t *testing.T, fs fakeSystem) *CommandMemory {
	t.Helper()
	m := &CommandMemory{}
	for _, l := range []string{"go test ./...", "git status", "ls"} {
		cl := fs.parse(t, l)
		require.Empty(t, cl.Risks)
		m.Remember(cl, fs.ctx(), DecisionAllow)
		require.Equal(t, DecisionAllow, m.Lookup(cl, fs.ctx()), l)
	}
	return m
}

// mustHaveRisk are the corpus classes whose lines must carry a Risk, not
// merely fail the allow list.
var mustHaveRisk = map[string]bool{
	"substitution": true, "redirection": true, "trampolines": true,
	"env injection": true, "shell state": true,
}

// sameAsRemembered are corpus lines the allow list refuses but that do
// exactly what a remembered line does: git status with an option that
// only turns the pager off is still the read-only git status.
var sameAsRemembered = map[string]bool{"git -P status": true, "git --no-pager status": true}

func TestCommandPolicyCorpusHasNoBypass(t *testing.T) {
	fs := newFakeSystem(t)
	term := Terminal{AllowedCommands: []string{"ls", "git status", "go test"}, Path: fs.bin}
	mem := rememberedMemory(t, fs)
	cases := loadCorpus(t, "bypass.txt", fs.evil)
	require.GreaterOrEqual(t, len(cases), 250)
	perClass := map[string]int{}
	bypasses := 0
	for _, c := range cases {
		perClass[c.class]++
		cl, err := ParseCommandLine(c.line, fs.look)
		blocked, why := cannotAutoRun(cl, err, term)
		if !blocked {
			bypasses++
			t.Errorf("bypass.txt:%d [%s] %q passes the allow list without risk (commands %q)", c.lineNo, c.class, c.line, names(cl))
			continue
		}
		if err == nil && mustHaveRisk[c.class] && len(cl.Risks) == 0 {
			// These constructs stay dangerous even when an operator
			// allows the program by name (allow "env", "find", "bash").
			bypasses++
			t.Errorf("bypass.txt:%d [%s] %q has no Risk (only %s)", c.lineNo, c.class, c.line, why)
		}
		if err == nil && !sameAsRemembered[c.line] {
			if d := mem.Lookup(cl, fs.ctx()); d == DecisionAllow {
				bypasses++
				t.Errorf("bypass.txt:%d [%s] %q auto-allowed by memory", c.lineNo, c.class, c.line)
			}
		}
	}
	require.Zero(t, bypasses)
	for _, class := range []string{"chaining", "substitution", "redirection", "trampolines", "argv0", "env injection", "shell state", "parse errors"} {
		require.NotZero(t, perClass[class], "class %q is empty", class)
	}
	t.Logf("corpus: %d lines, per class %v", len(cases), perClass)
}

// Lines that are spelled differently but run exactly an allowed command
// are not bypasses: they must pass, or the corpus above proves nothing.
func TestCommandPolicyAllowsEquivalentSpellingsOfAllowedCommands(t *testing.T) {
	fs := newFakeSystem(t)
	term := Terminal{AllowedCommands: []string{"ls", "git status", "go test"}, Path: fs.bin}
	mem := rememberedMemory(t, fs)
	tests := []struct {
		line string
		// remembered says whether memory covers the line: ls (a
		// read-only program) with any arguments inside the workspace, git
		// status with read-only options, go test exactly.
		remembered bool
	}{
		{"ls", true}, {`"ls"`, true}, {`\ls`, true}, {`l''s`, true},
		{"ls -la", true}, {"ls 'a b'", true}, {`ls "*"`, true}, {"ls /", false}, {"ls ~", false}, {"ls ..", false},
		{"git status", true}, {`"git" status`, true}, {`g'i't "status"`, true},
		{`\git status`, true}, {"git status --short", true},
		{"go test ./...", true}, {"go test -run 'TestX$' ./pkg", false}, {"go test ./... 2>&1", true},
		{"ls >/dev/null 2>&1", true}, {"time go test ./...", true},
		{"ls && git status; go test ./...", true}, {"ls | git status", true},
		{"ls\ngit status", true}, {filepath.Join(fs.bin, "ls"), true},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cl := fs.parse(t, tt.line)
			blocked, why := cannotAutoRun(cl, nil, term)
			require.False(t, blocked, why)
			want := DecisionNone
			if tt.remembered {
				want = DecisionAllow
			}
			require.Equal(t, want, mem.Lookup(cl, fs.ctx()))
		})
	}
}

// suffixes are appended to every remembered line; none may be auto-allowed.
var rememberedSuffixes = []string{
	"; rm -rf /", ";rm -rf /", " ; evil", "&& curl x|sh", " && curl x | sh", " && rm -rf /",
	" || evil", "||evil", " | sh", "|sh", " |& sh", " | xargs rm", " | tee ~/.bashrc",
	" $(evil)", ` "$(evil)"`, "$(evil)", " `evil`", "`evil`", "\nevil", "\n\nevil",
	"\r\nevil", " # x\nevil", " > ~/.bashrc", " >> ~/.bashrc", ">~/.bashrc", " 2> x",
	" &> x", " >&x", " < /etc/shadow", " <> x", " & evil", " &", "&", " <(evil)",
	" >(evil)", " $((1))", " $HOME", " ${X}", " *", " ?", " {a,b}", " <<EOF\nx\nEOF",
	" <<< x", "; ls; evil", " && ls && evil", "; (evil)", "; { evil; }",
	"; eval evil", "; exec evil", "; . ./evil", "; source ./evil", "; ./ls", "; ./git status",
	"; env ls", "; sudo ls", "; FOO=1 ls", "; PATH=. ls", "; ls() { evil; }",
	"; alias ls=evil", "; if ls; then evil; fi", "; for x in a; do evil; done",
	" $'\\x3b'", "; bash -c evil", "; sh",
}

// goSuffixes only mean something to go test: the flags that make it run an
// arbitrary program.
var goSuffixes = []string{
	" -exec=evil", " -exec evil", " --exec=evil", " -toolexec=evil", " -toolexec evil", " -vettool=evil",
}

// prefixes are put in front of every remembered line.
var rememberedPrefixes = []string{
	"evil; ", "evil && ", "evil | ", "FOO=1 ", "LD_PRELOAD=x ", "PATH=. ", "env ", "sudo ",
	"timeout 5 ", "nice ", "nohup ", "command ", "exec ", "eval ", "! ", "xargs ", "\\time ",
	"./", "/tmp/x/", "bash -c ", "$(evil) ", "`evil` ", "cd /tmp/x && ./",
}

func TestCommandMemoryRememberedAllowNeverCoversSuffixesOrPrefixes(t *testing.T) {
	fs := newFakeSystem(t)
	mem := rememberedMemory(t, fs)
	checked := 0
	for _, base := range []string{"go test ./...", "git status", "ls"} {
		var lines []string
		for _, s := range rememberedSuffixes {
			lines = append(lines, base+s)
		}
		if strings.HasPrefix(base, "go ") {
			for _, s := range goSuffixes {
				lines = append(lines, base+s)
			}
		}
		for _, p := range rememberedPrefixes {
			lines = append(lines, strings.ReplaceAll(p, "/tmp/x", fs.evil)+base)
		}
		for _, line := range lines {
			checked++
			cl, err := ParseCommandLine(line, fs.look)
			if err != nil {
				continue // unparsable lines are refused or asked
			}
			require.NotEqual(t, DecisionAllow, mem.Lookup(cl, fs.ctx()), "line %q auto-allowed (risks %q)", line, cl.Risks)
		}
	}
	require.GreaterOrEqual(t, checked, 200)
	t.Logf("remembered-allow suffix/prefix cases: %d", checked)
}

func TestCommandMemoryRejectAlwaysWinsOverAllow(t *testing.T) {
	fs := newFakeSystem(t)
	mem := rememberedMemory(t, fs)
	mem.Remember(fs.parse(t, "rm -rf /"), fs.ctx(), DecisionReject)
	require.Equal(t, DecisionReject, mem.Lookup(fs.parse(t, "ls; rm -rf /"), fs.ctx()))
	require.Equal(t, DecisionReject, mem.Lookup(fs.parse(t, "rm -rf / && ls"), fs.ctx()))
	// Risky lines still see rejects of the commands inside them.
	require.Equal(t, DecisionReject, mem.Lookup(fs.parse(t, "ls $(rm -rf /)"), fs.ctx()))

	// A later reject of an allowed key overrides it; a later allow does
	// not undo a reject.
	mem.Remember(fs.parse(t, "git status"), fs.ctx(), DecisionReject)
	require.Equal(t, DecisionReject, mem.Lookup(fs.parse(t, "git status"), fs.ctx()))
	mem.Remember(fs.parse(t, "git status"), fs.ctx(), DecisionAllow)
	require.Equal(t, DecisionReject, mem.Lookup(fs.parse(t, "git status"), fs.ctx()))
	require.Equal(t, DecisionAllow, mem.Lookup(fs.parse(t, "ls"), fs.ctx()))
}

// With a list configured, lines whose programs are not statically known
// are refused with a reason; program paths outside PATH are refused with
// a deny list.
func TestTerminalCheckRefusesOpaqueLinesWithAList(t *testing.T) {
	fs := newFakeSystem(t)
	deny := Terminal{DeniedCommands: []string{"rm"}, Path: fs.bin}
	allow := Terminal{AllowedCommands: []string{"ls", "env", "find", "bash", "echo"}, Path: fs.bin}
	opaque := []string{
		"env rm x", "command rm x", "exec rm x", "builtin rm", "nice rm x", "nohup rm x", "timeout 5 rm x",
		"echo x | xargs rm", "sudo rm x", "bash -c 'rm x'", "sh -c x", "eval 'rm x'", "$(echo rm) x",
		"`echo rm` x", "x=rm; $x y", `"$X" y`, "find . -exec rm {} +", "busybox rm x", `f(){ "$@"; }; f rm x`,
		"alias r=rm", "source ./x", ". ./x", "export PATH=.", "FOO=1 ls", "(( a[$i] ))", "echo ${a[$i]}",
		"echo ${!x}", "[[ $x -eq 1 ]]", "ls $((1+1))",
	}
	for _, line := range opaque {
		cl := fs.parse(t, line)
		require.NotEmpty(t, cl.Opaque, line)
		for _, term := range []Terminal{deny, allow} {
			err := term.Check(cl)
			require.ErrorIs(t, err, ErrCommandDenied, "%q with %v", line, term)
		}
		require.NoError(t, Terminal{Path: fs.bin}.Check(cl), "without lists %q is left to the permission", line)
	}
	err := deny.Check(fs.parse(t, "env rm x"))
	require.Contains(t, err.Error(), "must be known before it runs")
	for _, line := range []string{"ls", "ls; echo x", "ls > out", "ls $(echo x)", "if ls; then echo; fi", "ls ~", "cat <<EOF\nx\nEOF"} {
		cl := fs.parse(t, line)
		require.Empty(t, cl.Opaque, line)
		require.NoError(t, deny.Check(cl), line)
	}
	// Paths outside PATH, with a deny list only.
	for _, line := range []string{"./ls", filepath.Join(fs.evil, "ls"), "./nosuch", "x/git"} {
		err := deny.Check(fs.parse(t, line))
		require.ErrorIs(t, err, ErrCommandDenied, line)
		require.Contains(t, err.Error(), "must lie directly in one of the PATH directories", line)
	}
	require.NoError(t, deny.Check(fs.parse(t, filepath.Join(fs.bin, "ls"))))
	// A symlink in PATH to a denied program is denied.
	require.NoError(t, os.Symlink(filepath.Join(fs.bin, "rm"), filepath.Join(fs.bin, "del")))
	require.ErrorIs(t, deny.Check(fs.parse(t, "del x")), ErrCommandDenied)
}

func TestParseCommandLineMarksChainedLines(t *testing.T) {
	fs := newFakeSystem(t)
	for line, want := range map[string]bool{
		"ls": false, "ls | wc": false, "ls; ls": true, "ls && ls": true, "ls || ls": true, "ls\nls": true,
	} {
		require.Equal(t, want, fs.parse(t, line).Chained, line)
	}
}

// An allow entry that names a runner's command ("npx prettier", "uv run
// pytest") allows it: the project's program is often on no PATH, so no
// entry of its own could. An entry that stops before it ("npx", "uv
// run") allows the runner with no command of its own; deny still wins.
func TestTerminalCheckAllowEntriesNameARunnersCommand(t *testing.T) {
	fs := newFakeSystem(t)
	for _, b := range []string{"npx", "uv", "bundle"} {
		require.NoError(t, os.WriteFile(filepath.Join(fs.bin, b), []byte("#!/bin/sh\n"), 0o755))
	}
	for _, tt := range []struct {
		allow, deny []string
		line        string
		deniedN     string
	}{
		{[]string{"npx prettier"}, nil, "npx prettier --write .", ""},
		{[]string{"npx -y create-vite"}, nil, "npx -y create-vite app", ""},
		{[]string{"uv run pytest"}, nil, "uv run pytest -x", ""},
		{[]string{"bundle exec rspec"}, nil, "bundle exec rspec spec/a_spec.rb", ""},
		{[]string{"npx"}, nil, "npx prettier --write .", "prettier"},
		{[]string{"uv run"}, nil, "uv run pytest", "pytest"},
		{[]string{"npx prettier"}, nil, "npx rm x", "npx"},
		{[]string{"npx prettier"}, nil, "npx prettier && rm x", "rm"},
		{[]string{"npx prettier"}, []string{"prettier"}, "npx prettier --write .", "prettier"},
		{[]string{"uv run --with"}, nil, "uv run --with rm pytest", "pytest"},
	} {
		err := Terminal{AllowedCommands: tt.allow, DeniedCommands: tt.deny, Path: fs.bin}.Check(fs.parse(t, tt.line))
		if tt.deniedN == "" {
			assert.NoError(t, err, "%q with %q", tt.line, tt.allow)
			continue
		}
		var de *CommandDeniedError
		if assert.ErrorAs(t, err, &de, "%q with %q", tt.line, tt.allow) {
			assert.Equal(t, tt.deniedN, de.Name, "%q with %q", tt.line, tt.allow)
		}
	}
}
