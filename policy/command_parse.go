package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// This file holds the command-line parser: ParseCommandLine turns a bash
// line into the simple commands it runs, each resolved to its program,
// with the Risks it cannot prove harmless. What individual programs and
// builtins risk is in command_risk.go; the program lookup (NewLookPath)
// in path.go.

// SimpleCommand is one simple command of a shell line.
type SimpleCommand struct {
	// Name is argv[0] as written after quote removal ("git" for g'i't,
	// \git and "git"; "./git" stays "./git"). When argv[0] is not a
	// literal word (it contains $VAR, $(…), …) Name is its source text
	// and the line has a Risk.
	Name string
	// Resolved is the absolute path the injected lookPath returned, or ""
	// when the name was not found (a builtin, a function, a typo, or a
	// non-literal name).
	Resolved string
	// Args are the words after argv[0], after quote removal. A word that
	// is not a literal (it has expansions) is kept as source text and the
	// line has a Risk. Tildes are not expanded.
	Args []string
	// HomeArgs are the indices of the Args that start with an unquoted
	// "~", which the shell replaces with a home directory: "~/x" and
	// '~/x' have the same Args but are different files.
	HomeArgs []int `json:"homeArgs,omitempty"`
	// Key is what a remembered decision is stored under: the program
	// (Resolved, or Name when unresolved), then the leading option words
	// verbatim, then the first operand, joined by single spaces:
	//
	//	go test ./...        -> "/usr/bin/go test"
	//	git status --short   -> "/usr/bin/git status"
	//	git -C /x status     -> "/usr/bin/git -C /x"
	//	python3 -m pytest    -> "/usr/bin/python3 -m pytest"
	//	npm run -s build     -> "/usr/bin/npm run -s build"
	//	ls                   -> "/usr/bin/ls"
	//
	// Options are kept verbatim rather than skipped to reach the
	// subcommand because an option before the subcommand can change what
	// the program runs or where (git -c/-C, go -C, python -m, sudo -u), so
	// "git -C /tmp/x status" must never reuse an approval of "git status".
	// Extending past leading options to the first operand is what stops an
	// approval of "python3 -m pytest" from covering "python3 -m pip". For
	// runner subcommands (npm run, go run, uv run, bundle exec, docker
	// run, …) the operand after the subcommand is part of the key too, so
	// "npm run build" does not cover "npm run deploy". The result is
	// conservative: "ls -la" and "ls -l -a" are different keys, which
	// costs a question, never a bypass.
	Key string
	// runner is, for the command a runner runs (npx prettier), 1 + the
	// index in CommandLine.Commands of the runner's command, and runnerAt
	// the index in its Args where this command's name is: an allow entry
	// that names it there ("npx prettier") allows it (Terminal.Check).
	runner, runnerAt int
}

// CommandLine is a parsed shell line.
type CommandLine struct {
	// Source is the line as given.
	Source string
	// Commands are all simple commands of the line, including those
	// inside pipelines, && || ; & chains, subshells, groups,
	// if/for/while/case bodies, function bodies and command or process
	// substitutions (so a deny list sees "rm" in "ls $(rm -rf /)"). They
	// are in source order, except that a substitution's commands come
	// before the command whose words contain it, as the shell runs them.
	Commands []SimpleCommand
	// Risks are human-readable reasons why the parser cannot prove the
	// line does only what Commands say. A line with any Risk needs an
	// explicit permission every time: memory never auto-allows it and
	// callers must not auto-allow it because of an allow list either.
	Risks []string
	// Opaque are the Risks that also mean the set of programs the line
	// runs is not known before it runs: a non-literal command name,
	// trampolines (env, xargs, sudo, find -exec, bash -c, …), builtins
	// that run code or rebind names (eval, source, exec, command,
	// builtin, alias, hash), function definitions, assignments, and
	// arithmetic that can run commands through array subscripts. With a
	// deny or allow list configured, Terminal.Check refuses such lines.
	Opaque []string `json:"opaque,omitempty"`
	// Chained is set when the line runs more than one statement in
	// sequence (;, &&, ||, a newline): the permission policy "allow"
	// asks about such lines instead of allowing them (a pipeline alone
	// is not chained).
	Chained bool `json:"chained,omitempty"`
	// Unparsed is set for a line of a shell the policy cannot parse
	// (PowerShell, cmd.exe on Windows; UnparsedCommandLine): it has no
	// Commands and always a Risk, so it is asked about unless the session
	// is in full-access mode, and an allow_always of it covers exactly
	// that line in that directory.
	Unparsed bool `json:"unparsed,omitempty"`
}

// UnparsedCommandLine is line for shell, a shell whose language the
// policy does not parse (PowerShell, cmd.exe): no commands, and a Risk
// saying so, so that it is never allowed by a command list, a wide
// approval or the allow permission policy. It refuses what it refuses
// for any line: NUL bytes, over MaxCommandLineBytes, invalid UTF-8,
// control characters other than tab and newline, and invisible or
// bidirectional-control characters (the user approves what is shown, so
// it must be what runs).
func UnparsedCommandLine(line, shell string) (CommandLine, error) {
	cl := CommandLine{Source: line, Unparsed: true}
	switch {
	case strings.TrimSpace(line) == "":
		return cl, fmt.Errorf("%w: empty line", ErrCommandParse)
	case strings.IndexByte(line, 0) >= 0:
		return cl, fmt.Errorf("%w: line contains a NUL byte", ErrCommandParse)
	case len(line) > MaxCommandLineBytes:
		return cl, fmt.Errorf("%w: line is %d bytes, more than %d", ErrCommandParse, len(line), MaxCommandLineBytes)
	case !utf8.ValidString(line):
		return cl, fmt.Errorf("%w: the line is not valid UTF-8", ErrCommandParse)
	case hasControl(line):
		return cl, fmt.Errorf("%w: the line contains control characters other than tab and newline", ErrCommandParse)
	case hasInvisible(line):
		return cl, fmt.Errorf("%w: the line contains invisible or bidirectional-control characters, so it would display differently from what runs", ErrCommandParse)
	}
	r := shell + " lines are not parsed, so what this line runs is not known before it runs"
	cl.Risks, cl.Opaque = []string{r}, []string{r}
	return cl, nil
}

// ErrCommandParse is what a line the shell parser rejects unwraps to.
var ErrCommandParse = errors.New("cannot parse command line")

// Limits on what ParseCommandLine accepts; beyond them it returns an error
// wrapping ErrCommandParse instead of spending unbounded time and memory.
const (
	// MaxCommandLineBytes bounds the line length. Long heredocs that
	// write files are the usual reason to exceed it; they carry a Risk
	// anyway, so refusing to parse only turns "ask" into "refuse or ask".
	MaxCommandLineBytes = 64 << 10
	// MaxCommandNesting bounds how deeply statement lists (subshells,
	// groups, substitutions, bodies) may nest.
	MaxCommandNesting = 64
)

// ParseCommandLine parses line as bash with mvdan.cc/sh/v3/syntax and
// returns every simple command it would run, with lookPath applied to each
// literal argv[0] that is not a shell builtin.
//
// The parser is a whitelist, after codex's is_known_safe_command: a line
// made only of simple commands with literal (or quoted-literal) words,
// joined by ; && || | |& and newlines, optionally with the redirections
// 2>&1, 1>&2, >&2, >/dev/null, 2>/dev/null, &>/dev/null and </dev/null, is
// risk-free. Anything else — substitutions, expansions, other
// redirections, heredocs, assignments, control flow, subshells, functions,
// background jobs, globs, builtins that run code or change how later
// commands resolve, and programs that run other programs given in their
// arguments (trampolines such as env, xargs, sudo, bash -c, git -c,
// find -exec) — adds a Risk naming the construct and why it matters.
//
// A line the parser cannot parse, that contains a NUL byte (which a shell
// would silently truncate or drop), or that exceeds MaxCommandLineBytes or
// MaxCommandNesting is an error wrapping ErrCommandParse: the caller should refuse it or ask. lookPath may be
// nil, in which case nothing resolves.
func ParseCommandLine(line string, lookPath func(string) (string, error)) (CommandLine, error) {
	cl := CommandLine{Source: line}
	if strings.IndexByte(line, 0) >= 0 {
		return cl, fmt.Errorf("%w: line contains a NUL byte", ErrCommandParse)
	}
	if len(line) > MaxCommandLineBytes {
		return cl, fmt.Errorf("%w: line is %d bytes, more than %d", ErrCommandParse, len(line), MaxCommandLineBytes)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return cl, fmt.Errorf("%w: %w", ErrCommandParse, err)
	}
	p := &lineParser{src: line, lookPath: lookPath, cl: &cl}
	if !utf8.ValidString(line) {
		p.risk("the line is not valid UTF-8, so what the shell sees may differ from what is shown")
	}
	if hasControl(line) {
		// The parser and bash disagree on some of them (the parser drops a
		// \r that bash keeps), and terminals render them misleadingly.
		p.risk("the line contains control characters other than tab and newline")
	}
	if hasInvisible(line) {
		p.risk("the line contains invisible or bidirectional-control characters, so it displays differently from what runs")
	}
	p.stmts(f.Stmts)
	if p.tooDeep {
		return CommandLine{Source: line}, fmt.Errorf("%w: nesting deeper than %d", ErrCommandParse, MaxCommandNesting)
	}
	return cl, nil
}

// lineParser walks one parsed line, collecting commands and risks.
type lineParser struct {
	src      string
	lookPath func(string) (string, error)
	cl       *CommandLine
	seen     map[string]bool
	// cdSeen is set once a cd/pushd/popd appears: later relative names
	// ("./x", "bin/x") no longer resolve against the cwd the policy used.
	cdSeen bool
	// depth counts nested statement lists; past MaxCommandNesting the
	// walk stops and the line is refused.
	depth   int
	tooDeep bool
}

func (p *lineParser) risk(format string, args ...any) {
	p.add(false, fmt.Sprintf(format, args...))
}

// opaque records a risk that also hides which programs run.
func (p *lineParser) opaque(format string, args ...any) {
	p.add(true, fmt.Sprintf(format, args...))
}

func (p *lineParser) add(opaque bool, r string) {
	if p.seen == nil {
		p.seen = make(map[string]bool)
	}
	if !p.seen[r] {
		p.seen[r] = true
		p.cl.Risks = append(p.cl.Risks, r)
	}
	if opaque && !p.seen["\x00opaque\x00"+r] {
		p.seen["\x00opaque\x00"+r] = true
		p.cl.Opaque = append(p.cl.Opaque, r)
	}
}

// maxTextBytes clips the source text quoted in risks and kept for
// non-literal words, so that nested substitutions cost linear, not
// quadratic, memory.
const maxTextBytes = 120

// text returns the source text of n (clipped), for messages and
// non-literal words.
func (p *lineParser) text(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(p.src) || start > end {
		return ""
	}
	if end-start > maxTextBytes {
		end = start + maxTextBytes
		for end > start && !utf8.RuneStart(p.src[end]) {
			end--
		}
		return p.src[start:end] + "…"
	}
	return p.src[start:end]
}

func (p *lineParser) stmts(list []*syntax.Stmt) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > MaxCommandNesting {
		p.tooDeep = true
		return
	}
	if len(list) > 1 {
		p.cl.Chained = true
	}
	for _, s := range list {
		p.stmt(s)
	}
}

func (p *lineParser) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	if s.Background {
		p.risk("background job (&): the command keeps running after the line returns, outside any timeout")
	}
	if s.Coprocess || s.Disown {
		p.risk("coprocess or disowned job: the command runs detached from the line")
	}
	if s.Negated {
		p.risk("negation (!) is outside the whitelist of plain commands")
	}
	if s.Cmd != nil {
		p.command(s.Cmd)
	}
	// Redirections are checked after the command so that commands in a
	// redirect's substitution come after the command they belong to.
	for _, r := range s.Redirs {
		p.redirect(r)
	}
}

func (p *lineParser) command(c syntax.Command) {
	switch c := c.(type) {
	case *syntax.CallExpr:
		p.call(c)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt:
			p.cl.Chained = true
		case syntax.Pipe, syntax.PipeAll:
		default:
			p.risk("operator %s is outside the whitelist (; && || |)", c.Op)
		}
		p.stmt(c.X)
		p.stmt(c.Y)
	case *syntax.TimeClause:
		// The time keyword only measures the pipeline it prefixes.
		p.stmt(c.Stmt)
	case *syntax.Subshell:
		p.risk("subshell ( … ) is outside the whitelist of plain commands")
		p.stmts(c.Stmts)
	case *syntax.Block:
		p.risk("command group { … } is outside the whitelist of plain commands")
		p.stmts(c.Stmts)
	case *syntax.IfClause:
		p.risk("control flow (if) is outside the whitelist of plain commands")
		for ic := c; ic != nil; ic = ic.Else {
			p.stmts(ic.Cond)
			p.stmts(ic.Then)
		}
	case *syntax.WhileClause:
		p.risk("control flow (while/until) is outside the whitelist of plain commands")
		p.stmts(c.Cond)
		p.stmts(c.Do)
	case *syntax.ForClause:
		p.risk("control flow (for/select) is outside the whitelist and iterates over expanded words")
		p.nested(c.Loop)
		p.stmts(c.Do)
	case *syntax.CaseClause:
		p.risk("control flow (case) is outside the whitelist of plain commands")
		p.nested(c.Word)
		for _, it := range c.Items {
			for _, w := range it.Patterns {
				p.nested(w)
			}
			p.stmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		name := ""
		if c.Name != nil {
			name = c.Name.Value
		}
		p.opaque("function definition %q can shadow any command name", name)
		p.stmt(c.Body)
	case *syntax.DeclClause:
		variant := "declare"
		if c.Variant != nil {
			variant = c.Variant.Value
		}
		p.opaque("%s changes shell variables or the environment of later commands", variant)
		for _, a := range c.Args {
			p.nested(a)
		}
	case *syntax.ArithmCmd, *syntax.LetClause:
		p.opaque("arithmetic evaluation (( … ))/let can run commands through array subscripts")
		p.nested(c)
	case *syntax.TestClause:
		p.opaque("[[ … ]] evaluates arithmetic and array subscripts, which can run commands")
		p.nested(c)
	case *syntax.CoprocClause:
		p.risk("coproc runs a command detached from the line")
		p.stmt(c.Stmt)
	default:
		p.risk("shell construct %T is outside the whitelist", c)
		p.nested(c)
	}
}

// nested walks any node for substitutions, recording their commands and
// risks. It is used where the node itself has already been judged.
func (p *lineParser) nested(n syntax.Node) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			p.risk("command substitution $(…) or `…` runs a command and splices its output into the line")
			p.stmts(n.Stmts)
			return false
		case *syntax.ProcSubst:
			p.risk("process substitution <(…) or >(…) runs a command connected to a file name")
			p.stmts(n.Stmts)
			return false
		case *syntax.ParamExp:
			p.risk("parameter expansion $%s: its value is not known to the policy", paramName(n))
			if n.Excl || n.Index != nil || n.Slice != nil || (n.Exp != nil && n.Exp.Op == syntax.OtherParamOps) {
				// Subscripts and slices are arithmetic, ${!x} and
				// ${x@P} expand a value again: each can run commands.
				p.opaque("parameter expansion $%s evaluates a subscript or expands a value again, which can run commands", paramName(n))
			}
		case *syntax.ArithmExp:
			p.opaque("arithmetic expansion $(( … )) can run commands through array subscripts")
		}
		return true
	})
}

func paramName(pe *syntax.ParamExp) string {
	if pe.Param == nil {
		return "{…}"
	}
	if pe.Short {
		return pe.Param.Value
	}
	return "{" + pe.Param.Value + "…}"
}

func (p *lineParser) call(c *syntax.CallExpr) {
	for _, a := range c.Assigns {
		name := ""
		if a.Name != nil {
			name = a.Name.Value
		}
		if len(c.Args) == 0 {
			p.opaque("assignment %s=… changes shell variables for later commands", name)
		} else {
			p.opaque("assignment %s=… before a command sets its environment (LD_PRELOAD, PATH, … would change what runs)", name)
		}
		p.nested(a)
	}
	if len(c.Args) == 0 {
		return
	}
	name, nameOK := p.word(c.Args[0], true)
	args := make([]string, 0, len(c.Args)-1)
	var home []int
	for i, w := range c.Args[1:] {
		s, _ := p.word(w, false)
		args = append(args, s)
		if lit, ok := w.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(lit.Value, "~") {
			home = append(home, i)
		}
	}
	sc := SimpleCommand{Name: name, Args: args, HomeArgs: home}
	if nameOK {
		p.checkName(name, args)
		if p.lookPath != nil && !isShellBuiltin(name) {
			if r, err := p.lookPath(name); err == nil {
				sc.Resolved = r
			}
		}
	} else {
		p.opaque("command name %q is not a literal word, so the program that runs is not known", name)
	}
	sc.Key = commandKey(sc)
	p.cl.Commands = append(p.cl.Commands, sc)
	if nameOK {
		p.runnerCommand(filepath.Base(name), args, home)
	}
}

// runnerCommand adds the command a runner runs (npx prettier, uv run
// pytest, bundle exec rspec, npm exec -- rm x) as a simple command of the
// line: it is any program on the PATH (npm exec -- touch x ran touch), so
// the lists and every rule judge it as they judge the runner. When the
// runner's options before it may take a value, which word is the command
// is not known: that is opaque.
func (p *lineParser) runnerCommand(base string, args []string, home []int) {
	i := 0
	if subs, ok := execRunners()[base]; ok {
		// The runner's own options come first, and some take a value
		// (npm --prefix x exec -- rm y, uv --directory x run rm y): a
		// word after an option may be its value, so the subcommand is
		// looked for past it.
		// A word after an option not known to take none may be its value
		// or the subcommand: uv --directory run run rm y runs rm, so a
		// subcommand's name there is opaque.
		for value := false; ; i++ {
			if i == len(args) {
				return
			}
			a := args[i]
			switch {
			case strings.HasPrefix(a, "-") && runnerValues()[base].has(a):
				i++ // its value, whatever it is
				value = false
				continue
			case strings.HasPrefix(a, "-"):
				value = !strings.Contains(a, "=") && !runnerFlags.has(a)
				continue
			case subs.has(a) && value:
				p.opaque("%s %s %s: the program it runs is not known (the option may take the next word as its value)", base, args[i-1], a)
				return
			case !value && !subs.has(a):
				return
			}
			if subs.has(a) {
				break
			}
			value = false
		}
		i++
		switch base {
		case "direnv":
			i++ // direnv exec DIR command
		case "mise":
			// mise exec TOOL@VERSION... -- command
			j := slices.Index(args[i:], "--")
			if j < 0 {
				p.opaque("mise %s without --: the program it runs is not known", args[i-1])
				return
			}
			i += j
		}
	} else if !directRunners.has(base) {
		return
	}
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		if !strings.Contains(a, "=") && runnerValues()[base].has(a) {
			i++ // uv run --with pkg pytest: pkg is the option's
			continue
		}
		if !strings.Contains(a, "=") && !runnerFlags.has(a) {
			p.opaque("%s %s: the program it runs is not known (the option may take the next word as its value)", base, a)
			return
		}
	}
	if i >= len(args) {
		return
	}
	nested := SimpleCommand{Name: args[i], Args: args[i+1:], runner: len(p.cl.Commands), runnerAt: i}
	for _, h := range home {
		if h > i {
			nested.HomeArgs = append(nested.HomeArgs, h-i-1)
		}
	}
	p.checkName(nested.Name, nested.Args)
	if p.lookPath != nil && !isShellBuiltin(nested.Name) {
		if r, err := p.lookPath(nested.Name); err == nil {
			nested.Resolved = r
		}
	}
	nested.Key = commandKey(nested)
	p.cl.Commands = append(p.cl.Commands, nested)
	p.runnerCommand(filepath.Base(nested.Name), nested.Args, nested.HomeArgs) // corepack pnpm exec x
}

// execRunners are the programs whose subcommand runs the command that
// follows it: any program, not only a script of the project (npm run).
var execRunners = sync.OnceValue(func() map[string]*nameSet {
	return map[string]*nameSet{
		"npm": setOf("exec", "x"), "pnpm": setOf("exec", "dlx"), "yarn": setOf("exec", "dlx"), "bun": setOf("x"),
		"uv": setOf("run"), "poetry": setOf("run"), "pipenv": setOf("run"), "pdm": setOf("run"), "hatch": setOf("run"),
		"rye": setOf("run"), "pipx": setOf("run"), "bundle": setOf("exec"), "bundler": setOf("exec"),
		"conda": setOf("run"), "mamba": setOf("run"), "micromamba": setOf("run"), "pyenv": setOf("exec"),
		"rbenv": setOf("exec"), "nodenv": setOf("exec"), "asdf": setOf("exec"), "mise": setOf("exec", "x"),
		"direnv": setOf("exec"),
	}
})

// directRunners run the command that is their first operand.
var directRunners = setOf("npx", "pnpx", "bunx", "uvx", "corepack")

// runnerValues are, for each runner, options known to take exactly one
// value (the next word), so the word after that is the command: uv run
// --with pkg pytest runs pytest. Only options each runner documents so;
// any other option before the command leaves the line opaque. (npx -c,
// pnpm dlx -c run a shell string: not here.)
var runnerValues = sync.OnceValue(func() map[string]*nameSet {
	return map[string]*nameSet{
		"npx": setOf("-p", "--package"), "npm": setOf("-p", "--package", "--prefix"),
		"pnpm": setOf("--package", "-C", "--dir"), "yarn": setOf("-p", "--package", "--cwd"),
		"uv": setOf("--with", "--with-editable", "--with-requirements", "-p", "--python", "--directory", "--project",
			"--env-file", "--extra", "--group", "--package", "--index", "--default-index"),
		"uvx":   setOf("--from", "--with", "--with-editable", "--with-requirements", "-p", "--python", "--index", "--default-index"),
		"pipx":  setOf("--spec", "--python", "--index-url", "--pip-args"),
		"conda": setOf("-n", "--name", "-p", "--prefix"), "mamba": setOf("-n", "--name", "-p", "--prefix"),
		"micromamba": setOf("-n", "--name", "-p", "--prefix"),
		"poetry":     setOf("-C", "--directory", "-P", "--project"),
	}
})

// runnerFlags are runner options known to take no value, so the word
// after them is still the command.
var runnerFlags = setOf("-y", "--yes", "--no", "--offline", "--prefer-offline", "-q", "--quiet", "--silent",
	"-s", "--frozen", "--locked", "--no-sync", "--isolated", "--no-project", "--all-extras", "--no-dev", "--exact",
	"--no-cache", "-v", "--verbose")

// commandKey builds SimpleCommand.Key; see its documentation.
func commandKey(sc SimpleCommand) string {
	prog := sc.Resolved
	if prog == "" {
		prog = sc.Name
	}
	parts := []string{prog}
	i := 0
	for ; i < len(sc.Args); i++ {
		a := sc.Args[i]
		parts = append(parts, a)
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			break
		}
	}
	if i < len(sc.Args) && runnerSubcommands()[filepath.Base(sc.Name)].has(sc.Args[i]) {
		// "npm run build" and "npm run deploy" are different approvals.
		for _, a := range sc.Args[i+1:] {
			parts = append(parts, a)
			if !strings.HasPrefix(a, "-") {
				break
			}
		}
	}
	return strings.Join(parts, " ")
}

// runnerSubcommands are subcommands whose next operand names what runs (a
// script, a package, a module); Key includes that operand.
var runnerSubcommands = sync.OnceValue(func() map[string]*nameSet {
	return map[string]*nameSet{
		"npm":    setOf("run", "run-script", "exec", "x"),
		"pnpm":   setOf("run", "exec", "dlx"),
		"yarn":   setOf("run", "exec", "dlx"),
		"bun":    setOf("run", "x"),
		"go":     setOf("run", "tool"),
		"cargo":  setOf("run"),
		"uv":     setOf("run", "tool"),
		"poetry": setOf("run"),
		"pipx":   setOf("run"),
		"bundle": setOf("exec"),
		"dotnet": setOf("run", "tool"),
		"docker": setOf("run", "exec"),
		"podman": setOf("run", "exec"),
	}
})

// checkName records risks that depend on which program runs.
func (p *lineParser) checkName(name string, args []string) {
	if name == "" {
		p.risk("empty command name")
		return
	}
	if !isPlainName(name) {
		p.risk("command name %q has non-ASCII or control characters (look-alike names)", name)
	}
	hasSlash := strings.Contains(name, "/")
	if hasSlash && !filepath.IsAbs(name) && p.cdSeen {
		p.risk("relative command name %q after cd/pushd/popd is resolved against a different directory than the one checked", name)
	}
	if !hasSlash {
		if reason := builtinRisk(name, args); reason != "" {
			p.opaque("%s", reason)
		}
		switch name {
		case "cd", "pushd", "popd":
			p.cdSeen = true
		}
	}
	if reason := programRisk(filepath.Base(name), args); reason != "" {
		p.opaque("%s", reason)
	}
}

// hasControl reports whether s has an ASCII control character other than
// tab and newline, or DEL.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
			return true
		}
	}
	return false
}

// hasInvisible reports whether s has Unicode format characters (zero-width
// spaces and joiners, bidi overrides, soft hyphens): "Trojan Source"
// tricks that make a prompt show something other than the line.
func hasInvisible(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf && unicode.Is(unicode.Cf, r) {
			return true
		}
	}
	return false
}

// isPlainName reports whether s is printable ASCII. Non-ASCII names are
// legal but are how look-alike tricks ("ｇｉｔ", Cyrillic "е") hide.
func isPlainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// word returns the value of w after quote removal and whether it is a
// plain literal. Non-literal parts add risks (and their commands); the
// returned string is then the source text.
func (p *lineParser) word(w *syntax.Word, argv0 bool) (string, bool) {
	var b strings.Builder
	ok := true
	globbed := false
	bracket := -1 // offset in b of the first unquoted '['
	for i, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.Lit:
			v, glob, br, brace := unquoteLit(part.Value)
			if br >= 0 && bracket < 0 {
				bracket = b.Len() + br
			}
			globbed = globbed || glob
			if brace {
				ok = false
				p.risk("brace expansion in %q turns one word into several (e.g. {rm,-rf,/})", p.text(w))
			}
			if argv0 && i == 0 && strings.HasPrefix(part.Value, "~") {
				ok = false
				p.risk("tilde expansion in the command name %q: the program is chosen by $HOME", p.text(w))
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if part.Dollar {
				ok = false
				p.risk("ANSI-C quoting $'…' in %q decodes escapes the policy does not interpret", p.text(w))
			}
			b.WriteString(part.Value)
		case *syntax.DblQuoted:
			if part.Dollar {
				ok = false
				p.risk("locale quoting $\"…\" in %q is translated at run time", p.text(w))
			}
			for _, dp := range part.Parts {
				if lit, isLit := dp.(*syntax.Lit); isLit {
					b.WriteString(unquoteDouble(lit.Value))
					continue
				}
				ok = false
				p.nested(dp)
			}
		case *syntax.ExtGlob:
			ok = false
			p.risk("extended glob %q expands to workspace file names", p.text(w))
		case *syntax.BraceExp:
			ok = false
			p.risk("brace expansion in %q turns one word into several", p.text(w))
		default:
			ok = false
			switch part := part.(type) {
			case *syntax.ParamExp:
				if argv0 {
					p.risk("command name comes from parameter expansion $%s: any program could run", paramName(part))
				}
			case *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
			default:
				p.risk("word %q uses a construct outside the whitelist", p.text(w))
			}
			p.nested(part)
		}
	}
	// A "]" after an unquoted "[" makes a bracket glob; counting a quoted
	// "]" too can only over-report.
	if bracket >= 0 && strings.Contains(b.String()[bracket+1:], "]") {
		globbed = true
	}
	if globbed {
		ok = false
		if argv0 {
			p.risk("glob characters in the command name %q: the program is chosen by file names", p.text(w))
		} else {
			p.risk("unquoted glob %q expands to workspace file names, which may start with '-' and become options", p.text(w))
		}
	}
	if !ok {
		return p.text(w), false
	}
	return b.String(), true
}

// unquoteLit removes backslash quoting from an unquoted literal and
// reports unescaped * and ?, the output offset of the first unescaped "["
// (or -1; whether it opens a bracket glob depends on a later "]", which
// word decides), and brace expansion ({…,…} or {a..b}).
func unquoteLit(s string) (v string, glob bool, bracket int, brace bool) {
	bracket = -1
	if !strings.ContainsAny(s, `\*?[{`) {
		return s, false, -1, false
	}
	var b strings.Builder
	open := -1 // index in b of an unescaped '{'
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
			continue
		case c == '*' || c == '?':
			glob = true
		case c == '[' && bracket < 0:
			bracket = b.Len()
		case c == '{':
			open = b.Len()
		case c == '}' && open >= 0:
			inner := b.String()[open+1:]
			if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
				brace = true
			}
			open = -1
		}
		b.WriteByte(c)
	}
	return b.String(), glob, bracket, brace
}

// unquoteDouble removes the backslashes that are quoting inside "…": only
// before $ ` " \ and newline (a backslash-newline disappears).
func unquoteDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
				b.WriteByte(s[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// redirect accepts only the fd duplications and /dev/null redirections
// that cannot read or write a file.
func (p *lineParser) redirect(r *syntax.Redirect) {
	fd := ""
	if r.N != nil {
		fd = r.N.Value
	}
	target := ""
	literal := false
	if r.Word != nil {
		target, literal = p.word(r.Word, false)
	}
	if r.Hdoc != nil {
		p.nested(r.Hdoc)
	}
	safe := false
	if literal {
		switch r.Op {
		case syntax.DplOut: // 2>&1, 1>&2, >&2
			safe = (fd == "2" && target == "1") || ((fd == "" || fd == "1") && target == "2")
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll:
			safe = (fd == "" || fd == "1" || fd == "2") && target == "/dev/null"
		case syntax.RdrIn:
			safe = (fd == "" || fd == "0") && target == "/dev/null"
		}
	}
	if safe {
		return
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		p.risk("here-document or here-string %q feeds text the policy does not inspect to the command", p.text(r))
	default:
		p.risk("redirection %q reads or writes a file (only 2>&1, >/dev/null, 2>/dev/null and </dev/null are allowed)", p.text(r))
	}
}
