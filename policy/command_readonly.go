package policy

import (
	"strings"
	"sync"
)

// This file holds the read-only rules of CommandMemory's wide approvals:
// which programs only read and print, with which arguments they stay
// that way, and which git subcommands only show. An approval of one of
// them may cover other arguments; any other program's covers exactly the
// line approved.

// readOnlyRule says which arguments keep a read-only program read-only,
// for the wide approval scope ("cat, any files in the workspace").
type readOnlyRule struct {
	// noPaths: the arguments are not paths (echo, pwd): any are fine.
	noPaths bool
	// dirsOK: directory operands are fine (the program lists names);
	// otherwise a directory operand is refused, so recursive reads
	// (which would reach .git or .env inside it) never get the wide
	// scope.
	dirsOK bool
	// lists: the program shows what is inside its directory operands
	// (ls lists one, ls -R and find walk them): a directory holding one
	// of the paths the file tools never list (OperandInfo.HoldsDenied)
	// is refused, and so is the working directory when the program
	// lists it for want of an operand (ls alone, find -name x).
	lists bool
	// pathsFirst: the directories are the operands before the first
	// option or expression word (find); without one, "." is walked.
	pathsFirst bool
	// valueLetters are the short options that take the next word as
	// their value (ls -I pattern): that word names nothing listed.
	valueLetters string
	// singleDash: options are whole words (find's -name), not clusters.
	singleDash bool
	// banLetters are short option letters refused anywhere in a cluster.
	banLetters string
	// ban are options refused, spelled exactly or as opt=value.
	ban []string
}

// readOnlyPrograms are the programs that may be remembered with any
// arguments, not just the exact ones: they read files and print, and
// their rule refuses the options that write files, run programs, follow
// links out of the workspace or read file lists from files. Not listed,
// on purpose: sort (-o writes, --compress-program runs a program), uniq
// (a second operand is written), tee, less/more (run commands), rg
// (searches hidden files an .ignore file whitelists, -z runs
// decompressors), tree (-o writes), du, awk, sed, xargs.
var readOnlyPrograms = sync.OnceValue(func() map[string]readOnlyRule {
	return map[string]readOnlyRule{
		"cat":   {},
		"head":  {},
		"tail":  {},
		"wc":    {ban: []string{"--files0-from"}},
		"ls":    {dirsOK: true, lists: true, valueLetters: "ITwD", banLetters: "L", ban: []string{"--dereference"}},
		"grep":  {banLetters: "rRdf", ban: []string{"--recursive", "--dereference-recursive", "--directories", "--file", "--exclude-from"}},
		"egrep": {banLetters: "rRdf", ban: []string{"--recursive", "--dereference-recursive", "--directories", "--file", "--exclude-from"}},
		"fgrep": {banLetters: "rRdf", ban: []string{"--recursive", "--dereference-recursive", "--directories", "--file", "--exclude-from"}},
		"find": {dirsOK: true, lists: true, pathsFirst: true, singleDash: true, ban: []string{"-L", "-follow", "-files0-from",
			"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}},
		"stat": {dirsOK: true},
		"file": {dirsOK: true, banLetters: "fCzZ", ban: []string{"--files-from", "--compile", "--uncompress", "--uncompress-noreport"}},
		"diff": {banLetters: "r", ban: []string{"--recursive", "--exclude-from"}},
		"echo": {noPaths: true},
		"pwd":  {noPaths: true},
	}
})

// accepts reports whether args keep the program read-only and every
// path-like word inside the workspace (see readOnlyRule).
func (r readOnlyRule) accepts(args []string, ctx CommandContext) bool {
	if r.noPaths {
		return true
	}
	pathOK := func(w string) bool {
		if w == "-" {
			return true // stdin, which is /dev/null
		}
		info := ctx.operand(w)
		return info.Inside && (r.dirsOK || !info.Dir) && !(r.lists && info.Dir && info.HoldsDenied)
	}
	// named: an operand surely names what is listed; a word after an
	// option that may take it as its value (ls -I x, ls --sort size)
	// does not, and "." is listed then.
	operandsOnly, named, maybeValue := false, false, false
	for i, a := range args {
		if operandsOnly || len(a) < 2 || a[0] != '-' {
			if !pathOK(a) {
				return false
			}
			if r.pathsFirst {
				named = named || (i == 0 && a != "(" && a != "!")
			} else {
				named = named || !maybeValue
			}
			maybeValue = false
			continue
		}
		if a == "--" && !r.singleDash {
			operandsOnly, maybeValue = true, false
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		maybeValue = !hasValue && (strings.HasPrefix(name, "--") || strings.ContainsAny(name[1:], r.valueLetters))
		if !isOptionName(name) {
			return false
		}
		for _, b := range r.ban {
			// GNU getopt_long takes any unambiguous prefix of a long
			// option (grep --recurs is --recursive): a prefix of a
			// banned one is refused too.
			if name == b || (strings.HasPrefix(name, "--") && len(name) > 2 && strings.HasPrefix(b, name)) {
				return false
			}
		}
		if !r.singleDash && !strings.HasPrefix(name, "--") && strings.ContainsAny(name[1:], r.banLetters) && r.banLetters != "" {
			return false
		}
		if hasValue && !pathOK(value) {
			return false
		}
	}
	// ls with no operand lists ".", find with none walks it.
	if r.lists && !named && ctx.operand(".").HoldsDenied {
		return false
	}
	return true
}

// isOptionName accepts -x, -xyz, -n5, --long-name: no paths or other
// characters hiding in a cluster.
func isOptionName(s string) bool {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "-")
	if t == "" || len(s)-len(t) == 0 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || (i > 0 && (c == '-' || c == '_'))) {
			return false
		}
	}
	return true
}

// gitLogOptions are the diff/log/show options that only choose what is
// printed and how (checked by name, before any "=value").
var gitLogOptions = setOf(
	"-p", "-u", "-s", "--patch", "--no-patch", "--stat", "--shortstat", "--numstat", "--dirstat",
	"--summary", "--name-only", "--name-status", "--raw", "--oneline", "--graph", "--all",
	"--branches", "--tags", "--remotes", "--decorate", "--no-decorate", "--cached", "--staged",
	"--merges", "--no-merges", "--first-parent", "--reverse", "--follow", "--check", "--full-index",
	"--binary", "--abbrev-commit", "--no-abbrev-commit", "--abbrev", "--no-abbrev", "--no-color",
	"--color", "--word-diff", "--color-words", "--no-renames", "--find-renames", "--minimal",
	"--patience", "--histogram", "--diff-algorithm", "-w", "-b", "--ignore-all-space",
	"--ignore-space-change", "--ignore-blank-lines", "--ignore-cr-at-eol", "--ignore-space-at-eol",
	"-z", "--exit-code", "--quiet", "--cc", "-m", "--root", "--left-right", "--boundary",
	"--topo-order", "--date-order", "--author-date-order", "--source", "--full-diff", "--no-ext-diff",
	"--no-textconv", "-R", "--no-prefix", "--relative", "-i", "--regexp-ignore-case", "-E", "-F",
	"--invert-grep", "--all-match", "--no-walk", "--parents", "--children", "--relative-date",
	"--format", "--pretty", "--date", "--since", "--until", "--after", "--before", "--author",
	"--committer", "--grep", "--max-count", "--skip", "--diff-filter", "--unified", "--stat-width",
	"--no-notes", "--max-parents", "--min-parents", "--simplify-by-decoration", "--name-rev",
)

// gitStatusOptions are git status's options that only choose the output.
var gitStatusOptions = setOf(
	"-s", "--short", "-b", "--branch", "--porcelain", "--long", "-v", "--verbose", "-u", "-uno",
	"-unormal", "-uall", "--untracked-files", "--ignored", "-z", "--column", "--no-column",
	"--ahead-behind", "--no-ahead-behind", "--renames", "--no-renames", "--find-renames",
	"--show-stash", "--ignore-submodules",
)

// gitBranchListOptions are the options of git branch that only list.
var gitBranchListOptions = setOf(
	"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "-l", "--list", "--show-current",
	"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format",
	"--color", "--no-color", "--column", "--no-column", "-i", "--ignore-case", "--abbrev", "--no-abbrev",
)

// gitTagListOptions are the options of git tag that only list (not -a,
// which annotates a new tag, nor -v, which runs gpg).
var gitTagListOptions = setOf(
	"-l", "--list", "-n", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
	"--sort", "--format", "--color", "--no-color", "--column", "--no-column", "-i", "--ignore-case",
)

// gitReadOnly returns the subcommand of a git argument list that only
// reads — status, diff, log, show, and branch, tag and remote when they
// only list — with every option on that subcommand's list and every
// other word (revisions, pathspecs, list patterns) inside the workspace
// when read as a path. Anything else (git branch -D, git tag -d, git
// remote set-url, git stash clear, git checkout -- file, git push) is
// not read-only and is remembered exactly.
func gitReadOnly(args []string, ctx CommandContext) (string, bool) {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch args[i] {
		case "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects":
		default:
			return "", false
		}
	}
	if i == len(args) {
		return "", false
	}
	sub, rest := args[i], args[i+1:]
	var allowed *nameSet
	listing := false
	switch sub {
	case "status":
		allowed = gitStatusOptions
	case "diff", "log", "show":
		allowed = gitLogOptions
	case "branch":
		allowed, listing = gitBranchListOptions, true
	case "tag":
		allowed, listing = gitTagListOptions, true
	case "remote":
		for _, a := range rest {
			if a != "-v" && a != "--verbose" {
				return "", false
			}
		}
		return sub, true
	default:
		return "", false
	}
	list := false
	var words []string
	afterDashes := false
	for _, a := range rest {
		if afterDashes || len(a) < 2 || a[0] != '-' {
			words = append(words, a)
			continue
		}
		if a == "--" && !listing {
			afterDashes = true
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		if !allowed.has(name) && !gitNumericOption(name, listing) {
			return "", false
		}
		if name == "-l" || name == "--list" {
			list = true
		}
		if hasValue && !ctx.operand(value).Inside {
			return "", false
		}
	}
	// "git branch x" creates a branch and "git tag x" a tag: operands
	// only list with --list.
	if listing && len(words) > 0 && !list {
		return "", false
	}
	for _, w := range words {
		// A ':' makes a word a revision:path (HEAD:.env, :.env) or a
		// pathspec with magic (:/, :(top)x): git reads it from its
		// objects or from the repository's top, beyond what the path
		// checks see (a tracked .env the sandbox masks on disk).
		if strings.Contains(w, ":") || !ctx.operand(w).Inside {
			return "", false
		}
	}
	return sub, true
}

// gitNumericOption accepts -5, -n5, -U3 (log and diff only).
func gitNumericOption(name string, listing bool) bool {
	if listing {
		return false
	}
	t := strings.TrimPrefix(name, "-")
	t = strings.TrimPrefix(strings.TrimPrefix(t, "n"), "U")
	if t == "" {
		return false
	}
	for _, c := range t {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
