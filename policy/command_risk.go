package policy

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// This file holds the per-program knowledge of the command parser: which
// names are bash builtins, which builtins run code or change how later
// commands resolve, and which programs run other programs chosen by their
// arguments (trampolines). Allowing a trampoline by name is allowing
// anything, so every such use is a Risk. The tables are deliberately
// broad; a false positive costs one permission question.

// shellBuiltins are the names bash runs itself without a PATH search, so
// ParseCommandLine does not resolve them (the file on PATH with the same
// name is not what runs).
var shellBuiltins = setOf(
	".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd",
	"command", "compgen", "complete", "compopt", "continue", "declare", "dirs",
	"disown", "echo", "enable", "eval", "exec", "exit", "export", "false", "fc",
	"fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local",
	"logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray",
	"readonly", "return", "set", "shift", "shopt", "source", "suspend", "test",
	"times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias",
	"unset", "wait",
)

func isShellBuiltin(name string) bool { return shellBuiltins.has(name) }

// IsShellBuiltin reports whether bash runs name itself, without a PATH
// search.
func IsShellBuiltin(name string) bool { return shellBuiltins.has(name) }

// IsTrampoline reports whether the program with base name base runs
// another program given in its arguments (env, xargs, sudo, timeout, ...).
func IsTrampoline(base string) bool { return trampolines.has(base) }

// IsShell reports whether the program with base name base is a shell.
func IsShell(base string) bool { return shells.has(base) }

// InterpreterFamily names the interpreter family of a program's base name
// (python3.12 -> python), or reports that it is none.
func InterpreterFamily(base string) (string, bool) { return interpreterFamily(base) }

// builtinRisk returns why running builtin name with args is a risk, or "".
func builtinRisk(name string, args []string) string {
	switch name {
	case "eval", "source", ".":
		return fmt.Sprintf("%s runs its arguments or a file as shell code", name)
	case "exec":
		return "exec replaces the shell with another command and can redirect its descriptors"
	case "command", "builtin":
		return fmt.Sprintf("%s runs the command given in its arguments (trampoline)", name)
	case "trap":
		return "trap registers shell code to run later"
	case "hash":
		return "hash -p binds a command name to any file"
	case "enable":
		return "enable -f loads a shared object into the shell"
	case "alias", "unalias":
		return "aliases change what later command names run"
	case "set", "shopt":
		return fmt.Sprintf("%s changes how the shell parses and runs later commands", name)
	case "fc", "history":
		return fmt.Sprintf("%s re-runs history entries or starts an editor", name)
	case "bind", "complete", "compgen", "compopt":
		return fmt.Sprintf("%s can register or run commands (-x, -C, -F)", name)
	case "read", "mapfile", "readarray", "getopts", "unset", "let",
		"declare", "typeset", "local", "export", "readonly":
		return fmt.Sprintf("%s assigns to variables named in its arguments; an array subscript there runs commands", name)
	case "printf":
		if anyOption(args, func(o string) bool { return strings.HasPrefix(o, "-v") }) {
			return "printf -v assigns to a variable whose array subscript can run commands"
		}
	case "wait":
		if anyOption(args, func(o string) bool { return strings.HasPrefix(o, "-") && strings.Contains(o, "p") }) {
			return "wait -p assigns to a variable whose array subscript can run commands"
		}
	case "test", "[":
		for _, a := range args {
			if a == "-v" || a == "-R" {
				return fmt.Sprintf("%s %s evaluates an array subscript, which can run commands", name, a)
			}
		}
	}
	return ""
}

// trampolines run another program named in their arguments (or detach,
// elevate, or wrap one); any use is a risk.
var trampolines = setOf(
	"env", "xargs", "sudo", "doas", "su", "runuser", "pkexec", "sg", "newgrp",
	"timeout", "nice", "ionice", "nohup", "stdbuf", "setsid", "setpriv",
	"chroot", "unshare", "nsenter", "flock", "chrt", "taskset", "time", "watch",
	"parallel", "strace", "ltrace", "busybox", "toybox", "firejail", "bwrap",
	"systemd-run", "script", "expect", "eatmydata", "fakeroot", "proot",
	"valgrind", "gdb", "lldb", "rlwrap", "unbuffer", "dbus-run-session",
	"xvfb-run", "numactl", "prlimit", "cpulimit", "torsocks", "proxychains",
	"proxychains4", "faketime", "catchsegv", "entr", "start-stop-daemon",
	"daemonize", "at", "batch", "crontab", "tmux", "screen", "ssh-agent",
	"vi", "vim", "nvim", "ex", "view", "vimdiff", "rvim", "emacs", "emacsclient",
	"exec", "eval", "sem", "run-parts", "chpst", "nocache", "cgexec", "sandbox",
)

// shells run a script given with -c, on stdin, or from startup files.
var shells = setOf(
	"sh", "bash", "zsh", "dash", "ksh", "ksh93", "mksh", "lksh", "pdksh", "ash",
	"fish", "csh", "tcsh", "yash", "posh", "rbash", "elvish", "nu", "xonsh",
	"pwsh", "powershell",
)

// inlineCode maps interpreters to the short option letters that take
// program text (or load code) from the command line.
var inlineCode = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"python": "c", "pypy": "c",
		"node": "eprc", "nodejs": "eprc", "bun": "epr", "deno": "",
		"perl": "eEMmdxI", "ruby": "erIxS", "php": "radBRFE",
		"lua": "el", "luajit": "elj", "rscript": "e", "r": "e", "osascript": "e",
		"tclsh": "", "wish": "", "jshell": "", "irb": "r", "julia": "eEL",
	}
})

// inlineCodeLong are long options with the same effect.
var inlineCodeLong = []string{
	"--eval", "--print", "--require", "--import", "--loader",
	"--experimental-loader", "--command", "--expr", "--load",
}

// interpreterFamily maps a program base name to its inlineCode key:
// python3.12 -> python, perl5.36 -> perl, nodejs -> nodejs.
func interpreterFamily(base string) (string, bool) {
	lower := strings.ToLower(base)
	if _, ok := inlineCode()[lower]; ok {
		return lower, true
	}
	for fam := range inlineCode() {
		if len(fam) > 1 && strings.HasPrefix(lower, fam) && isVersionSuffix(lower[len(fam):]) {
			return fam, true
		}
	}
	return "", false
}

// isVersionSuffix accepts "3", "3.12", "5.36.0", "-3.12", "w" (pythonw).
func isVersionSuffix(s string) bool {
	s = strings.TrimPrefix(s, "-")
	s = strings.TrimSuffix(s, "w")
	if s == "" {
		return true
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// programRisk returns why running a program whose base name is base with
// args is a risk, or "".
func programRisk(base string, args []string) string {
	if trampolines.has(base) {
		return fmt.Sprintf("%s runs another program given in its arguments (trampoline)", base)
	}
	if shells.has(base) {
		if len(operands(args)) == 0 || containsWord(args, "-") {
			return fmt.Sprintf("%s reads a script from stdin or runs interactively", base)
		}
		if anyOption(args, func(string) bool { return true }) {
			return fmt.Sprintf("%s with options (-c runs a string as a script; -i/-l/--rcfile source startup files)", base)
		}
		return ""
	}
	if fam, ok := interpreterFamily(base); ok {
		letters := inlineCode()[fam]
		for _, a := range args {
			if o, short := shortOption(a); short && strings.ContainsAny(o, letters) && letters != "" {
				return fmt.Sprintf("%s %s runs program text given on the command line", base, a)
			}
			if hasLongOption(a, inlineCodeLong...) {
				return fmt.Sprintf("%s %s runs program text given on the command line", base, a)
			}
		}
		ops := operands(args)
		if len(ops) == 0 || containsWord(args, "-") {
			return fmt.Sprintf("%s reads its program from stdin", base)
		}
		if fam == "deno" && (ops[0] == "eval" || ops[0] == "repl") {
			return fmt.Sprintf("deno %s runs program text given on the command line", ops[0])
		}
		if fam == "bun" && ops[0] == "exec" {
			return "bun exec runs a shell script given in its arguments (Bun Shell)"
		}
		return ""
	}
	if rule, ok := argRules()[base]; ok {
		return rule(args)
	}
	return ""
}

// argRules veto the arguments that turn an otherwise ordinary program into
// a trampoline or a file writer (codex's per-tool flag vetoes).
var argRules = sync.OnceValue(func() map[string]func(args []string) string {
	return map[string]func(args []string) string{
		"find":   findRisk,
		"fd":     fdRisk,
		"fdfind": fdRisk,
		"git":    gitRisk,
		"go":     goRisk,
		"awk":    awkRisk,
		"gawk":   awkRisk,
		"mawk":   awkRisk,
		"nawk":   awkRisk,
		"sed":    sedRisk,
		"gsed":   sedRisk,
		"make":   makeRisk,
		"gmake":  makeRisk,
		"rg":     longVeto("rg", "--pre", "--hostname-bin"),
		"cargo":  longVeto("cargo", "--config"),
		"npm":    npmRisk,
		"npx":    npmRisk,
		"pnpm":   npmRisk,
		"yarn":   npmRisk,
		"tar": gnuVeto("tar", true, []string{"--checkpoint"}, "--to-command", "--checkpoint-action", "--use-compress-program",
			"--rsh-command", "--rmt-command", "--info-script", "--new-volume-script", "-I", "-F"),
		"bsdtar": gnuVeto("bsdtar", true, nil, "--use-compress-program", "-I"),
		"zip":    zipRisk,
		// man-db runs the programs its configuration file DEFINEs (pager,
		// tbl, nroff, ...): -C/--config-file names one.
		"man": gnuVeto("man", false, nil, "-P", "--pager", "-H", "--html", "--browser", "-C", "--config-file"),
		// Programs that run a program or shell command named in an option:
		// sort's compressor (fed the data: --compress-program=sh runs the
		// sorted lines), split's filter ($SHELL -c), the diff program of
		// sdiff and diff3, wget's askpass and its -e wgetrc commands
		// (use_askpass=...).
		"sort":  gnuVeto("sort", false, nil, "--compress-program"),
		"split": gnuVeto("split", false, nil, "--filter"),
		"sdiff": gnuVeto("sdiff", false, nil, "--diff-program"),
		"diff3": gnuVeto("diff3", false, nil, "--diff-program"),
		"wget":  wgetRisk,
		"ed":    edRisk,
		// A shell string or command given to run in an environment:
		// nix-shell --run 'rm x', nix develop -c rm x (bun exec: above).
		"nix-shell": longVeto("nix-shell", "--run", "--command"),
		"nix":       longVeto("nix", "-c", "--command"),
		"sqlite3":   sqliteRisk,
		"psql":      psqlRisk,
		"mysql":     mysqlRisk("mysql"),
		"mariadb":   mysqlRisk("mariadb"),
		"ssh":       sshRisk("ssh", "oF"),
		"scp":       sshRisk("scp", "oFS"),
		"sftp":      sftpRisk,
		// apt's -o sets any configuration item, and some name commands
		// (APT::Update::Pre-Invoke, DPkg::Pre-Invoke, Dir::Bin::dpkg);
		// -c reads a configuration file that can set them.
		"apt":       aptRisk("apt"),
		"apt-get":   aptRisk("apt-get"),
		"apt-cache": aptRisk("apt-cache"),
		"aptitude":  aptRisk("aptitude"),
		// groff -U (unsafe mode) runs the shell commands of a document's
		// .sy and .pso requests (groff -U -Tutf8 x.tr, with ".sy rm
		// victim" in x.tr, removed it); nroff and troff pass it on.
		"groff": gnuVeto("groff", false, nil, "-U"),
		"nroff": gnuVeto("nroff", false, nil, "-U"),
		"troff": gnuVeto("troff", false, nil, "-U"),
		"rsync": rsyncRisk,
	}
})

// zipRisk: zip -T runs the command -TT or --unzip-command names, and
// Info-ZIP takes an abbreviated long option (zip -T --unzip-comm=cmd
// ran cmd, checked).
func zipRisk(args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "-TT") || gnuLongOption(a, nil, "--unzip-command") {
			return fmt.Sprintf("zip %s runs a program given in its arguments", a)
		}
	}
	return ""
}

// wgetRisk: wget runs the program --use-askpass names, or a wgetrc
// command sets (use_askpass, through -e/--execute or a --config file).
// Other -e commands (-e robots=off) change what wget fetches and writes,
// as its options do: not a program.
func wgetRisk(args []string) string {
	for i, a := range args {
		if gnuLongOption(a, nil, "--use-askpass", "--config") {
			return fmt.Sprintf("wget %s runs a program given in its arguments", a)
		}
		v, ok := "", false
		if gnuLongOption(a, nil, "--execute") {
			if _, v, ok = strings.Cut(a, "="); !ok && i+1 < len(args) {
				v, ok = args[i+1], true
			}
		} else if o, short := shortOption(a); short {
			// The rest of the cluster after e, or the next word; an e
			// inside another option's value only asks.
			if _, rest, found := strings.Cut(o, "e"); found {
				if v, ok = rest, true; rest == "" && i+1 < len(args) {
					v = args[i+1]
				}
			}
		}
		if ok && wgetrcRunsProgram(v) {
			return fmt.Sprintf("wget %s runs a program given in its arguments", a)
		}
	}
	return ""
}

// wgetrcRunsProgram reports whether a wgetrc command names a program:
// wget reads the command's name without case, dashes or underscores
// (Use-AskPass is use_askpass).
func wgetrcRunsProgram(cmd string) bool {
	name, _, _ := strings.Cut(cmd, "=")
	name = strings.ToLower(strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, name))
	return name == "useaskpass"
}

// edRisk: ed reads its commands from stdin, and "!cmd" runs a shell
// command (printf '!rm x\n' | ed f), as a shell reading stdin does.
func edRisk([]string) string {
	return "ed reads editing commands from stdin, and ! runs shell commands"
}

// sqliteRisk: the sqlite3 shell runs dot-commands given as arguments or
// with -cmd (.shell and .system run programs, .load loads code, .output
// and .once write files), and load_extension() loads code from SQL.
//
// Every word counts, the database file's too: which words are option
// values is the shell's to know (-bail takes none, -cmd one), and a
// database named ".x.db" only asks.
func sqliteRisk(args []string) string {
	operands, stdin := 0, true
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			operands++
			continue
		}
		switch o := "-" + strings.TrimLeft(a, "-"); o {
		case "-init":
			return fmt.Sprintf("sqlite3 %s reads dot-commands from a file (.shell and .system run programs)", a)
		case "-version", "-help":
			stdin = false
		default:
			i += sqliteValues()[o]
		}
	}
	// With no SQL after the database, the shell reads its commands from
	// stdin: printf '.shell x' | sqlite3 db ran x.
	if stdin && operands < 2 {
		return "sqlite3 reads dot-commands from stdin without SQL in its arguments (.shell and .system run programs)"
	}
	for _, a := range args {
		for _, line := range strings.Split(a, "\n") {
			if l := strings.TrimLeft(line, " \t;"); len(l) > 1 && l[0] == '.' && l[1] >= 'a' && l[1] <= 'z' {
				return fmt.Sprintf("sqlite3 %s runs a dot-command given in its arguments (.shell and .system run programs)", a)
			}
		}
		if strings.Contains(strings.ToLower(a), "load_extension") {
			return fmt.Sprintf("sqlite3 %s loads code (load_extension)", a)
		}
	}
	return ""
}

// sqliteValues are how many words the sqlite3 shell's options take
// (the rest take none); an option it does not know is an error.
var sqliteValues = sync.OnceValue(func() map[string]int {
	return map[string]int{
		"-cmd": 1, "-separator": 1, "-newline": 1, "-nullvalue": 1, "-escape": 1, "-maxsize": 1, "-mmap": 1,
		"-vfs": 1, "-heap": 1, "-nonce": 1, "-pagecache": 2, "-lookaside": 2,
	}
})

// psqlRisk: psql runs a shell command for \! (and pipes to one for \o
// |cmd, \copy ... program, \g |cmd) wherever it reads meta-commands: in
// a -c/--command, from a -f/--file, and from stdin when no -c is given
// (printf '\\! rm x' | psql db); -o/--output '|cmd' pipes the results
// to a program. Any backslash in its words asks (a -v value, a -c in a
// cluster such as -Xc, which is -X -c).
func psqlRisk(args []string) string {
	for _, a := range args {
		if strings.Contains(a, `\`) {
			return fmt.Sprintf(`psql %s holds a backslash meta-command (\! runs a shell command)`, a)
		}
	}
	stdin := true
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break // database and user names
		}
		letter, value, ok := byte(0), "", false
		if strings.HasPrefix(a, "--") {
			name, v, has := strings.Cut(a, "=")
			for _, o := range psqlLong() {
				if gnuLongOption(name, nil, o.name) {
					letter, value, ok = o.letter, v, has
					break
				}
			}
			if letter == 0 || !strings.ContainsRune(psqlValues, rune(letter)) {
				ok = true // no value, or one psql does not take from the next word
			}
		} else if o, short := shortOption(a); short {
			for j := 0; j < len(o); j++ {
				letter = o[j]
				if strings.IndexByte(psqlValues, letter) >= 0 {
					value, ok = o[j+1:], j+1 < len(o)
					break
				}
				if strings.IndexByte("lV?", letter) >= 0 {
					stdin = false
				}
			}
			if strings.IndexByte(psqlValues, letter) < 0 {
				ok = true
			}
		} else {
			continue
		}
		if !ok && i+1 < len(args) {
			i++
			value = args[i]
		}
		switch letter {
		case 'f':
			return fmt.Sprintf(`psql %s reads meta-commands from a file (\! runs a shell command)`, a)
		case 'o':
			if strings.Contains(value, "|") {
				return fmt.Sprintf("psql %s pipes its output to a program", a)
			}
		case 'c', 'l', 'V', '?':
			stdin = false
		}
	}
	if stdin {
		return `psql reads meta-commands from stdin without -c (\! runs a shell command)`
	}
	return ""
}

// psqlValues are psql's short options that take a value (the rest of
// the cluster, or the next word).
const psqlValues = "cdfFhLopPRTUv"

// psqlLong are psql's long options as their short letter ('x': a value
// and no letter of its own); getopt_long takes any unambiguous prefix.
var psqlLong = sync.OnceValue(func() []struct {
	name   string
	letter byte
} {
	return []struct {
		name   string
		letter byte
	}{
		{"--command", 'c'}, {"--file", 'f'}, {"--output", 'o'}, {"--list", 'l'}, {"--version", 'V'}, {"--help", '?'},
		{"--dbname", 'd'}, {"--field-separator", 'F'}, {"--host", 'h'}, {"--log-file", 'L'}, {"--port", 'p'},
		{"--pset", 'P'}, {"--record-separator", 'R'}, {"--table-attr", 'T'}, {"--username", 'U'},
		{"--set", 'v'}, {"--variable", 'v'},
	}
})

// mysqlRisk: the mysql and mariadb clients run a shell command for
// "system" or \! wherever they read client commands: in -e/--execute,
// and from stdin without -e (a dump restored with mysql < dump.sql ran
// its \! lines); "source" and \. read commands from a file, "pager" and
// "tee" name a program or write a file, --plugin-dir with --default-auth
// loads a library, and an option file (--defaults-file) can set any of
// these. Options are read as my_getopt reads them: any unambiguous
// prefix, "_" for "-", a "loose-" prefix.
func mysqlRisk(name string) func([]string) string {
	return func(args []string) string {
		stdin := true
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a == "--" {
				break
			}
			execute, value, ok := false, "", false
			if strings.HasPrefix(a, "--") {
				n, v, has := strings.Cut(a, "=")
				n = "--" + strings.TrimPrefix(strings.ReplaceAll(n[2:], "_", "-"), "loose-")
				switch {
				case gnuLongOption(n, nil, "--pager", "--tee", "--plugin-dir", "--default-auth", "--defaults-file",
					"--defaults-extra-file", "--defaults-group-suffix", "--login-path"):
					return fmt.Sprintf("%s %s runs or loads a program, or reads options from a file", name, a)
				case gnuLongOption(n, nil, "--execute"):
					execute, value, ok = true, v, has
				case gnuLongOption(n, nil, "--version", "--help"):
					stdin = false
				}
			} else if o, short := shortOption(a); short {
				for j := 0; j < len(o); j++ {
					c := o[j]
					if c == 'p' || c == '#' {
						break // an optional value: the rest of the cluster
					}
					if strings.IndexByte("eDhPuS", c) >= 0 {
						execute, value, ok = c == 'e', o[j+1:], j+1 < len(o)
						if !ok && !execute && i+1 < len(args) {
							i++ // the value of -D, -h, ...
						}
						break
					}
					if strings.IndexByte("VI?", c) >= 0 {
						stdin = false
					}
				}
			}
			if !execute {
				continue
			}
			if !ok && i+1 < len(args) {
				i++
				value = args[i]
			}
			stdin = false
			if strings.Contains(value, `\`) {
				return fmt.Sprintf(`%s %s runs a client command given in its arguments (\! runs a shell command)`, name, a)
			}
			if mysqlNamedCommand(value) {
				return fmt.Sprintf("%s %s runs a client command given in its arguments (system runs a shell command)", name, a)
			}
		}
		if stdin {
			return fmt.Sprintf(`%s reads client commands from stdin without -e (system and \! run shell commands)`, name)
		}
		return ""
	}
}

// mysqlNamedCommand reports whether a statement of text starts with one
// of the mysql client's named commands that run a program, read
// commands from a file or write one. The client takes a named command
// as the first word of a line (and, with -G, of any line of a
// statement); here of every line and of every statement after a ";"
// too. A word elsewhere is SQL ("select source from events").
func mysqlNamedCommand(text string) bool {
	for _, stmt := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' || r == ';' }) {
		stmt = strings.TrimLeftFunc(stmt, unicode.IsSpace)
		end := strings.IndexFunc(stmt, func(r rune) bool { return !(r == '_' || r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r))) })
		if end < 0 {
			end = len(stmt)
		}
		switch strings.ToLower(stmt[:end]) {
		case "system", "pager", "source", "tee", "edit", "ssl_session_data_print":
			return true
		}
	}
	return false
}

func findRisk(args []string) string {
	for _, a := range args {
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir":
			return fmt.Sprintf("find %s runs a command for every match (trampoline)", a)
		case "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			return fmt.Sprintf("find %s deletes or writes files", a)
		}
	}
	return ""
}

func fdRisk(args []string) string {
	for _, a := range args {
		if a == "-x" || a == "-X" || hasLongOption(a, "--exec", "--exec-batch") {
			return fmt.Sprintf("fd %s runs a command for every match (trampoline)", a)
		}
	}
	return ""
}

// gitSafeGlobal are git options before the subcommand that neither run
// programs nor point git at another repository or config.
var gitSafeGlobal = setOf("--no-pager", "-P", "--version", "--help",
	"--no-optional-locks", "--literal-pathspecs", "--no-replace-objects")

func gitRisk(args []string) string {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		if !gitSafeGlobal.has(args[i]) {
			return fmt.Sprintf("git %s before the subcommand can set config (core.pager, core.sshCommand, aliases) or another repository, which runs programs", args[i])
		}
	}
	if i == len(args) {
		return ""
	}
	sub, rest := args[i], args[i+1:]
	switch sub {
	case "config":
		return "git config can set commands later git calls run (core.pager, core.fsmonitor, core.hooksPath, aliases)"
	case "filter-branch", "filter-repo", "difftool", "mergetool":
		return fmt.Sprintf("git %s runs commands given in its arguments or config", sub)
	case "bisect", "submodule":
		if containsWord(rest, "run") || containsWord(rest, "foreach") {
			return fmt.Sprintf("git %s run/foreach runs a command given in its arguments", sub)
		}
	case "rebase":
		if containsWord(rest, "-x") || anyOption(rest, func(o string) bool { return hasLongOption(o, "--exec") }) {
			return "git rebase --exec runs a command after each commit"
		}
	case "clone", "fetch", "pull", "ls-remote", "archive", "push":
		if containsWord(rest, "-u") || containsWord(rest, "-c") {
			return fmt.Sprintf("git %s -u/-c sets the remote program or config to run", sub)
		}
	case "grep":
		if containsWord(rest, "-O") || anyOption(rest, func(o string) bool { return hasLongOption(o, "--open-files-in-pager") }) {
			return "git grep -O runs a pager command"
		}
	}
	for _, a := range rest {
		if hasLongOption(a, "--output", "--ext-diff", "--exec", "--upload-pack", "--receive-pack",
			"--extcmd", "--config", "--template", "--tool", "--textconv") {
			return fmt.Sprintf("git %s %s writes files or runs an external program", sub, a)
		}
	}
	return ""
}

func goRisk(args []string) string {
	for _, a := range args {
		o := strings.TrimPrefix(a, "-")
		if hasLongOption(o, "-exec", "-toolexec", "-vettool") || hasLongOption(a, "-exec", "-toolexec", "-vettool") {
			return fmt.Sprintf("go %s runs an arbitrary program around the build", a)
		}
	}
	ops := operands(args)
	if len(ops) > 0 && ops[0] == "env" && anyOption(args, func(o string) bool { return o == "-w" || o == "-u" }) {
		return "go env -w persistently changes GOFLAGS and other settings later go commands obey"
	}
	return ""
}

func awkRisk(args []string) string {
	for _, a := range args {
		if o, short := shortOption(a); short && strings.ContainsAny(o[:1], "fiEl") {
			return fmt.Sprintf("awk %s loads program text from a file or extension", a)
		}
		if gnuLongOption(a, nil, "--file", "--include", "--load", "--exec", "--source") {
			return fmt.Sprintf("awk %s loads program text from a file or extension", a)
		}
		for _, bad := range []string{"system", "|", ">", "getline", "@load", "ENVIRON"} {
			if strings.Contains(a, bad) {
				return fmt.Sprintf("awk program uses %q, which can run commands or write files", bad)
			}
		}
	}
	return ""
}

// sedRisk vetoes GNU sed's e command and s///e flag (run a command) and
// w/W (write a file), and scripts from files. Every script word is
// checked; so is the first operand when no -e/--expression is given.
// Checking for the letters anywhere in the script is coarse (s/hello/x/
// is refused) but cannot miss a command.
func sedRisk(args []string) string {
	var scripts []string
	explicit := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			continue
		case gnuLongOption(a, nil, "--file"):
			return "sed --file reads its script from a file"
		case gnuLongOption(a, nil, "--expression"):
			explicit = true
			if _, v, ok := strings.Cut(a, "="); ok {
				scripts = append(scripts, v)
			} else if i+1 < len(args) {
				i++
				scripts = append(scripts, args[i])
			}
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'f':
					return "sed -f reads its script from a file"
				case 'e':
					explicit = true
					if j+1 < len(a) {
						scripts = append(scripts, a[j+1:])
					} else if i+1 < len(args) {
						i++
						scripts = append(scripts, args[i])
					}
					j = len(a)
				case 'l':
					if j+1 == len(a) && i+1 < len(args) {
						i++
					}
					j = len(a)
				case 'i':
					j = len(a) // the rest is a backup suffix
				}
			}
		}
	}
	if !explicit {
		if ops := operands(args); len(ops) > 0 {
			scripts = append(scripts, ops[0])
		}
	}
	for _, s := range scripts {
		if strings.ContainsAny(s, "ewW") {
			return fmt.Sprintf("sed script %q may run a command (e) or write a file (w)", s)
		}
	}
	return ""
}

func makeRisk(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && strings.Contains(a, "=") {
			return fmt.Sprintf("make variable override %q can replace SHELL or any recipe command", a)
		}
		if a == "-f" || a == "-E" || gnuLongOption(a, nil, "--file", "--makefile", "--eval") ||
			(strings.HasPrefix(a, "-f") && !strings.HasPrefix(a, "--")) {
			return fmt.Sprintf("make %s reads rules from elsewhere", a)
		}
	}
	return ""
}

func npmRisk(args []string) string {
	for _, a := range args {
		if a == "-c" || hasLongOption(a, "--call", "--script-shell", "--node-options", "--shell") {
			return fmt.Sprintf("%s runs a command or shell given in its arguments", a)
		}
	}
	return ""
}

func rsyncRisk(args []string) string {
	for _, a := range args {
		// Any prefix counts: whether rsync's popt takes abbreviations
		// is its version's to say, and "--rs" names nothing else.
		if gnuLongOption(a, nil, "--rsh", "--rsync-path") {
			return fmt.Sprintf("rsync %s runs a program given in its arguments", a)
		}
		if o, short := shortOption(a); short && strings.Contains(o, "e") {
			return fmt.Sprintf("rsync %s runs a remote shell program given in its arguments", a)
		}
	}
	return ""
}

// sshRisk vetoes the options that run a local program (ProxyCommand,
// LocalCommand via -o or a config file via -F, scp/sftp -S/-D).
func sshRisk(name, letters string) func([]string) string {
	return func(args []string) string {
		for _, a := range args {
			if o, short := shortOption(a); short && strings.ContainsAny(o, letters) {
				return fmt.Sprintf("%s %s can run a local program (ProxyCommand, LocalCommand, -S)", name, a)
			}
		}
		return ""
	}
}

// aptRisk: apt's configuration options (-o/--option, -c/--config-file)
// can name programs it runs (APT::Update::Pre-Invoke::=cmd runs cmd
// before an update).
func aptRisk(name string) func([]string) string {
	return func(args []string) string {
		for _, a := range args {
			o, short := shortOption(a)
			if short && strings.ContainsAny(o, "oc") || gnuLongOption(a, nil, "--option", "--config-file") {
				return fmt.Sprintf("%s %s sets configuration that can name programs it runs", name, a)
			}
		}
		return ""
	}
}

// sftpRisk: sftp reads its commands from stdin, or a batch file (-b),
// and "!cmd" runs a local shell command (printf '!rm x' | sftp host);
// -o, -F, -S and -D can run a local program too.
func sftpRisk(args []string) string {
	if r := sshRisk("sftp", "oFSD")(args); r != "" {
		return r
	}
	return "sftp reads its commands from stdin or a batch file (-b), and ! runs a local shell command"
}

// longVeto refuses any of opts, spelled exactly, as opt=value, or (for
// single-letter opts like -I) with the value attached.
func longVeto(name string, opts ...string) func([]string) string {
	return func(args []string) string {
		for _, a := range args {
			for _, o := range opts {
				if hasLongOption(a, o) || (len(o) == 2 && o[0] == '-' && strings.HasPrefix(a, o)) {
					return fmt.Sprintf("%s %s runs a program given in its arguments or writes files", name, a)
				}
			}
		}
		return ""
	}
}

// gnuVeto is longVeto for a program that reads its options with GNU
// getopt_long or argp, which take any unambiguous prefix of a long option
// (tar --to-comm is --to-command): see gnuLongOption. A single-letter
// opt is found anywhere in a cluster of short options (tar -xvIevil is
// -x -v -I evil), and, for a program that reads old-style options
// (oldStyle: tar xIf evil x.tar), in its first argument without a dash.
// A letter that is part of another option's value counts too: that
// only asks.
func gnuVeto(name string, oldStyle bool, exact []string, opts ...string) func([]string) string {
	return func(args []string) string {
		for i, a := range args {
			cluster := ""
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
				cluster = a[1:]
			} else if oldStyle && i == 0 && !strings.HasPrefix(a, "-") {
				cluster = a
			}
			for _, o := range opts {
				if gnuLongOption(a, exact, o) || (len(o) == 2 && o[0] == '-' && strings.Contains(cluster, o[1:])) {
					return fmt.Sprintf("%s %s runs a program given in its arguments or writes files", name, a)
				}
			}
		}
		return ""
	}
}

// gnuLongOption reports whether a names one of opts as GNU getopt_long
// reads it: --name or --name=value where name is the option or any
// prefix of it (an unambiguous prefix is that option; an ambiguous one
// is an error, so counting it costs nothing), unless name is exactly one
// of exact, the program's own options that a longer vetoed one begins
// with (tar --checkpoint, beside --checkpoint-action).
func gnuLongOption(a string, exact []string, opts ...string) bool {
	name, _, _ := strings.Cut(a, "=")
	if len(name) < 3 || !strings.HasPrefix(name, "--") || slices.Contains(exact, name) {
		return false
	}
	for _, o := range opts {
		if strings.HasPrefix(o, name) {
			return true
		}
	}
	return false
}

// hasLongOption reports whether a is one of opts or opt=value.
func hasLongOption(a string, opts ...string) bool {
	for _, o := range opts {
		if a == o || strings.HasPrefix(a, o+"=") {
			return true
		}
	}
	return false
}

// shortOption returns the letters of a single-dash option word ("-lc" ->
// "lc"), or false for operands, "-", "--" and long options.
func shortOption(a string) (string, bool) {
	if len(a) < 2 || a[0] != '-' || a[1] == '-' {
		return "", false
	}
	return a[1:], true
}

// anyOption reports whether any option word (starting with - or +, other
// than "-" and "--") satisfies f.
func anyOption(args []string, f func(string) bool) bool {
	for _, a := range args {
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') && a != "--" && f(a) {
			return true
		}
	}
	return false
}

// operands returns the words that do not look like options. It cannot
// know which options take values, so a value is counted as an operand.
func operands(args []string) []string {
	var ops []string
	for _, a := range args {
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') {
			continue
		}
		if a == "-" {
			continue
		}
		ops = append(ops, a)
	}
	return ops
}

func containsWord(args []string, w string) bool {
	for _, a := range args {
		if a == w {
			return true
		}
	}
	return false
}

func setOf(names ...string) *nameSet { return &nameSet{names: names} }

// nameSet is a set of names whose map is built on first use: the
// policy's tables are not needed to start, and every start (every
// sandbox helper too) would otherwise build them all.
type nameSet struct {
	names []string
	once  sync.Once
	m     map[string]bool
}

// has reports whether name is in s (false for a nil set).
func (s *nameSet) has(name string) bool {
	if s == nil {
		return false
	}
	s.once.Do(func() {
		s.m = make(map[string]bool, len(s.names))
		for _, n := range s.names {
			s.m[n] = true
		}
	})
	return s.m[name]
}
