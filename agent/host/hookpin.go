package host

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
)

// Pinning what a project hook runs. The user trusts a hook's command
// line; the line may run files the confined model can change (a script
// in the workspace, the Makefile of a make target). Such a file is
// pinned: read once with the hooks file, shown in the trust question,
// hashed into the trust, and the hook runs a copy of that content (the
// line, and the copies of shell scripts and Makefiles, are rewritten to
// name the copies). What cannot be pinned makes the hooks unpinnable, and
// they do not run: a program or script chosen when the hook runs, one
// that does not exist yet, a shell or interpreter reading its program
// from stdin, programs that run another program from their arguments
// (env, xargs, timeout, find -exec, ...), variables that change what runs
// (LD_PRELOAD, BASH_ENV, PATH, ...), and runners that run code the
// workspace defines in files of their own (npm run, go test, cargo, a
// Makefile that includes others, ...).
//
// What is not followed: what an interpreter's script loads itself (a
// Python import, a Node require; they resolve next to the pinned copy,
// not in the workspace), and programs a Makefile names through its own
// variables (the Makefile is shown).

// Limits on what is pinned.
const (
	maxPinnedFileBytes = 256 << 10
	maxPinnedFiles     = 64
	maxPinDepth        = 8
)

// errUnpinnable is what a hook that cannot be pinned unwraps to.
var errUnpinnable = errors.New("cannot be pinned")

func unpinnable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUnpinnable, fmt.Sprintf(format, args...))
}

// pinnedFile is a file a hook runs, as the user trusts it.
type pinnedFile struct {
	path string // absolute, as the hook names it
	data []byte // the content read once
	// tmpl is data with the files it runs named by their copies (shell
	// scripts, Makefiles); nil: the copy is data as it is.
	tmpl *pinTemplate
}

// pinTemplate is text with spans to replace when the copies' paths are
// known.
type pinTemplate struct {
	text string
	subs []pinSub
}

// pinSub replaces text[start:end] with the quoted path of file's copy
// (after prefix), or with the quoted rendering of code.
type pinSub struct {
	start, end int
	prefix     string
	file       string
	code       *pinTemplate
}

// render is the text with every span replaced; paths maps each pinned
// file to its copy.
func (t *pinTemplate) render(paths map[string]string) (string, error) {
	if len(t.subs) == 0 {
		return t.text, nil
	}
	subs := slices.Clone(t.subs)
	slices.SortFunc(subs, func(a, b pinSub) int { return a.start - b.start })
	var b strings.Builder
	at := 0
	for _, s := range subs {
		if s.start < at || s.end > len(t.text) {
			return "", errors.New("overlapping pin spans")
		}
		b.WriteString(t.text[at:s.start])
		var repl string
		if s.code != nil {
			inner, err := s.code.render(paths)
			if err != nil {
				return "", err
			}
			repl = inner
		} else {
			repl = paths[s.file]
		}
		q, err := syntax.Quote(repl, syntax.LangBash)
		if err != nil {
			return "", err
		}
		b.WriteString(s.prefix + q)
		at = s.end
	}
	b.WriteString(t.text[at:])
	return b.String(), nil
}

// pinner analyses hook lines and the files they run.
type pinner struct {
	cwd      string
	writable []string // a file here could change: pinned
	lookPath func(string) (string, error)
	// pathReaches: the hooks' PATH has an entry the model could fill
	// (relative, or in a writable path), so no bare name is fixed.
	pathReaches bool
	files       map[string]*pinnedFile
	visiting    map[string]bool
	depth       int
	// denied are the paths the file tools never read
	// (policy.FS.DeniedPaths): a pinned file is read by the agent,
	// shown in the question and copied where confined commands can
	// read it, so it is read under the file tools' rules.
	denied []string
}

func newPinner(cwd string, writable []string, pathList string, denied []string) *pinner {
	p := &pinner{cwd: cwd, writable: writable, lookPath: policy.NewLookPath(pathList, cwd),
		files: map[string]*pinnedFile{}, visiting: map[string]bool{}, denied: denied}
	for _, d := range filepath.SplitList(pathList) {
		if d == "" || !filepath.IsAbs(d) || p.inWritable(filepath.Clean(d)) != "" {
			p.pathReaches = true
		}
	}
	return p
}

// sortedFiles are the pinned files by path.
func (p *pinner) sortedFiles() []*pinnedFile {
	out := make([]*pinnedFile, 0, len(p.files))
	for _, f := range p.files {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *pinnedFile) int { return strings.Compare(a.path, b.path) })
	return out
}

// inWritable returns the writable path holding abs, or "".
func (p *pinner) inWritable(abs string) string {
	for _, w := range p.writable {
		if rel, err := filepath.Rel(w, abs); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return w
		}
	}
	return ""
}

// line analyses shell code (a hook's line, a -c string, a script).
func (p *pinner) line(src string) (*pinTemplate, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxPinDepth {
		return nil, unpinnable("scripts nest more than %d deep", maxPinDepth)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, unpinnable("the shell cannot parse it: %v", err)
	}
	t := &pinTemplate{text: src}
	syntax.Walk(f, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil && policy.CheckEnv([]string{n.Name.Value}) != nil {
				err = unpinnable("setting %s changes what runs", n.Name.Value)
			}
		case *syntax.CallExpr:
			err = p.call(t, n.Args)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// lit is a word's value when it is literal (quotes allowed, no
// expansions).
func lit(w *syntax.Word) (string, bool) {
	var b strings.Builder
	var part func(syntax.WordPart) bool
	part = func(wp syntax.WordPart) bool {
		switch x := wp.(type) {
		case *syntax.Lit:
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			if x.Dollar {
				return false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if !part(q) {
					return false
				}
			}
		default:
			return false
		}
		return true
	}
	for _, wp := range w.Parts {
		if !part(wp) {
			return "", false
		}
	}
	s := b.String()
	// Unquoted backslashes and a leading ~ change the value.
	if strings.ContainsRune(s, '\\') || strings.HasPrefix(s, "~") {
		return "", false
	}
	return s, true
}

func span(w *syntax.Word) (int, int) { return int(w.Pos().Offset()), int(w.End().Offset()) }

// runners run code a workspace defines in files of their own (package
// scripts, tasks, tests); nil: any use, else the subcommands that do.
// Built on first use, as interpreterOptions: hooks are pinned long after
// start, if ever.
var runners = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"npm": nil, "npx": nil, "pnpm": nil, "pnpx": nil, "yarn": nil, "bun": nil, "bunx": nil, "deno": nil,
		"cargo": nil, "just": nil, "task": nil, "mage": nil, "rake": nil, "invoke": nil, "inv": nil,
		"gradle": nil, "gradlew": nil, "mvn": nil, "mvnw": nil, "ant": nil, "sbt": nil, "bazel": nil,
		"bazelisk": nil, "buck": nil, "buck2": nil, "pants": nil, "nx": nil, "turbo": nil, "lerna": nil,
		"composer": nil, "poetry": nil, "uv": nil, "uvx": nil, "pipenv": nil, "hatch": nil, "pdm": nil,
		"tox": nil, "nox": nil, "pytest": nil, "py.test": nil, "jest": nil, "vitest": nil, "mocha": nil,
		"pre-commit": nil, "lefthook": nil, "cmake": nil, "ctest": nil, "meson": nil, "ninja": nil,
		"scons": nil, "bundle": nil, "rails": nil, "rspec": nil, "dotnet": nil, "swift": nil,
		"go": {"run", "test", "generate", "tool"},
	}
})

// Interpreter options: the letters that take program text from the
// command line (nothing to pin), those that load code from elsewhere (a
// module, a library: unpinnable), and those taking a value.
var interpreterOptions = sync.OnceValue(func() map[string]struct{ inline, load, value string } {
	return map[string]struct{ inline, load, value string }{
		"python": {"c", "m", "WXQ"}, "pypy": {"c", "m", "WX"},
		"node": {"ep", "r", ""}, "nodejs": {"ep", "r", ""},
		"perl": {"eE", "MmIdx", ""}, "ruby": {"e", "rIx", ""}, "php": {"r", "dcf", ""},
		"lua": {"e", "l", ""}, "luajit": {"e", "lj", ""}, "rscript": {"e", "", ""}, "r": {"e", "", ""},
	}
})

var interpreterLongLoad = []string{"--require", "--import", "--loader", "--experimental-loader", "--env-file"}

// call analyses one simple command (args[0] the program).
func (p *pinner) call(t *pinTemplate, args []*syntax.Word) error {
	if len(args) == 0 {
		return nil
	}
	name, ok := lit(args[0])
	if !ok {
		return unpinnable("the program %q is chosen when the hook runs", wordText(t.text, args[0]))
	}
	base := filepath.Base(name)
	vals := make([]string, len(args))
	literal := make([]bool, len(args))
	for i, a := range args {
		vals[i], literal[i] = lit(a)
	}
	switch name {
	case "eval":
		return p.code(t, args[1:], "eval")
	case "source", ".":
		if len(args) < 2 {
			return nil
		}
		return p.pinWord(t, args[1], kindShell)
	case "exec", "command":
		i := 1
		for ; i < len(args) && literal[i] && strings.HasPrefix(vals[i], "-"); i++ {
			if name == "command" && (strings.Contains(vals[i], "v") || strings.Contains(vals[i], "V")) {
				return nil // command -v: a lookup, nothing runs
			}
			if name == "exec" && vals[i] == "-a" {
				i++
			}
		}
		return p.call(t, args[min(i, len(args)):])
	case "trap":
		if len(args) >= 3 {
			return p.code(t, args[1:2], "trap")
		}
		return nil
	case "hash", "enable", "mapfile", "readarray", "complete", "compgen", "bind", "alias":
		return unpinnable("%s can make a name run another file or code", name)
	}
	if policy.IsTrampoline(base) {
		return unpinnable("%s runs another program given in its arguments: call the program directly", base)
	}
	if base == "find" || base == "fd" || base == "fdfind" {
		for i, v := range vals {
			if !literal[i] || slices.Contains([]string{"-exec", "-execdir", "-ok", "-okdir", "-x", "-X", "--exec", "--exec-batch"}, v) {
				return unpinnable("%s runs a command for what it finds", base)
			}
		}
	}
	if subs, ok := runners()[base]; ok {
		if subs == nil {
			return unpinnable("%s runs code the workspace defines (package scripts, tasks, tests, build files)", base)
		}
		for i := 1; i < len(args); i++ {
			if !literal[i] {
				return unpinnable("%s with a subcommand chosen when the hook runs", base)
			}
			if !strings.HasPrefix(vals[i], "-") {
				if slices.Contains(subs, vals[i]) {
					return unpinnable("%s %s runs code from the workspace", base, vals[i])
				}
				break
			}
		}
	}
	if strings.Contains(name, "/") {
		if err := p.pinWord(t, args[0], kindProgram); err != nil {
			return err
		}
	} else if !policy.IsShellBuiltin(name) && !isKeywordLike(name) {
		if p.pathReaches {
			return unpinnable("%s is looked up in a PATH the workspace can change", name)
		}
		if found, err := p.lookPath(name); err == nil && p.inWritable(found) != "" {
			return unpinnable("%s resolves to %s, a file the workspace can change: name it by its path", name, found)
		}
	}
	switch {
	case base == "make" || base == "gmake":
		return p.make(t, args, vals, literal)
	case policy.IsShell(base):
		return p.shell(t, args, vals, literal, base)
	}
	if fam, ok := policy.InterpreterFamily(base); ok {
		return p.interpreter(t, args, vals, literal, fam, base)
	}
	return nil
}

func isKeywordLike(name string) bool {
	return name == "[[" || name == "]]" || name == "{" || name == "}"
}

// wordText is a word's source text.
func wordText(src string, w *syntax.Word) string {
	s, e := span(w)
	if s < 0 || e > len(src) || s > e {
		return ""
	}
	return src[s:e]
}

// code analyses words that hold shell code (eval's, trap's, -c's):
// literal ones are analysed as a line, and their span rewritten with its
// copies' names; code built at run time cannot be pinned.
func (p *pinner) code(t *pinTemplate, words []*syntax.Word, what string) error {
	if len(words) == 0 {
		return nil
	}
	var parts []string
	for _, w := range words {
		v, ok := lit(w)
		if !ok {
			return unpinnable("%s runs code built when the hook runs", what)
		}
		parts = append(parts, v)
	}
	inner, err := p.line(strings.Join(parts, " "))
	if err != nil {
		return err
	}
	if len(inner.subs) > 0 {
		s, _ := span(words[0])
		_, e := span(words[len(words)-1])
		t.subs = append(t.subs, pinSub{start: s, end: e, code: inner})
	}
	return nil
}

// shell handles a shell's arguments: -c code, or the script to run.
func (p *pinner) shell(t *pinTemplate, args []*syntax.Word, vals []string, literal []bool, base string) error {
	for i := 1; i < len(args); i++ {
		if !literal[i] {
			return unpinnable("%s's arguments are chosen when the hook runs", base)
		}
		a := vals[i]
		switch {
		case a == "--rcfile" || a == "--init-file" || a == "-s" || a == "-":
			return unpinnable("%s %s reads code from elsewhere", base, a)
		case a == "-o" || a == "+o" || a == "-O" || a == "+O":
			i++
		case a == "--":
			if i+1 < len(args) {
				return p.pinWord(t, args[i+1], kindShell)
			}
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c"):
			for j := i + 1; j < len(args); j++ {
				if literal[j] && (vals[j] == "-o" || vals[j] == "+o") {
					j++
					continue
				}
				if !literal[j] || !strings.HasPrefix(vals[j], "-") {
					return p.code(t, args[j:j+1], base+" -c")
				}
			}
			return nil
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
		default:
			return p.pinWord(t, args[i], kindShell)
		}
	}
	return unpinnable("%s reads its script from standard input", base)
}

// interpreter handles an interpreter's arguments: inline code, or the
// script to run.
func (p *pinner) interpreter(t *pinTemplate, args []*syntax.Word, vals []string, literal []bool, fam, base string) error {
	opt := interpreterOptions()[fam]
	for i := 1; i < len(args); i++ {
		if !literal[i] {
			return unpinnable("%s's arguments are chosen when the hook runs", base)
		}
		a := vals[i]
		switch {
		case a == "-":
			return unpinnable("%s reads its program from standard input", base)
		case a == "--":
			if i+1 < len(args) {
				return p.pinWord(t, args[i+1], kindAsIs)
			}
			return unpinnable("%s reads its program from standard input", base)
		case strings.HasPrefix(a, "--"):
			if slices.ContainsFunc(interpreterLongLoad, func(o string) bool { return a == o || strings.HasPrefix(a, o+"=") }) {
				return unpinnable("%s %s loads code from elsewhere", base, a)
			}
			if a == "--eval" || a == "--print" || strings.HasPrefix(a, "--eval=") || strings.HasPrefix(a, "--print=") {
				return nil
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			letters := a[1:]
			for k := 0; k < len(letters); k++ {
				c := rune(letters[k])
				if strings.ContainsRune(opt.load, c) {
					return unpinnable("%s -%c loads code from elsewhere", base, c)
				}
				if strings.ContainsRune(opt.inline, c) {
					return nil // the program is on the line, shown with it
				}
				if strings.ContainsRune(opt.value, c) {
					if k == len(letters)-1 {
						i++ // the value is the next word
					}
					break // the rest of the word is the value
				}
			}
		default:
			return p.pinWord(t, args[i], kindAsIs)
		}
	}
	return unpinnable("%s reads its program from standard input", base)
}

// make pins the Makefile a make call reads and runs it through -f.
func (p *pinner) make(t *pinTemplate, args []*syntax.Word, vals []string, literal []bool) error {
	named := false
	for i := 1; i < len(args); i++ {
		if !literal[i] {
			return unpinnable("make's arguments are chosen when the hook runs")
		}
		a := vals[i]
		switch {
		case a == "-C" || strings.HasPrefix(a, "--directory") || (strings.HasPrefix(a, "-C") && !strings.HasPrefix(a, "--")),
			a == "-I" || strings.HasPrefix(a, "--include-dir") || (strings.HasPrefix(a, "-I") && !strings.HasPrefix(a, "--")):
			return unpinnable("make %s reads Makefiles from elsewhere", a)
		case a == "-f" || a == "--file" || a == "--makefile":
			if i+1 >= len(args) {
				return unpinnable("make %s without a file", a)
			}
			i++
			named = true
			if err := p.pinWord(t, args[i], kindMakefile); err != nil {
				return err
			}
		case strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "--makefile=") || (strings.HasPrefix(a, "-f") && !strings.HasPrefix(a, "--")):
			return unpinnable("make %s: give the Makefile as a separate word (-f file)", a)
		case !strings.HasPrefix(a, "-") && strings.Contains(a, "="):
			return unpinnable("make variable override %q can replace any recipe", a)
		}
	}
	if named {
		return nil
	}
	for _, n := range []string{"GNUmakefile", "makefile", "Makefile"} {
		abs := filepath.Join(p.cwd, n)
		if p.inWritable(abs) == "" {
			continue
		}
		if _, _, err := runtime.ReadRegularFile(abs, p.inWritable(abs), 1); err != nil {
			continue
		}
		f, err := p.pin(abs, kindMakefile)
		if err != nil {
			return err
		}
		_, e := span(args[0])
		t.subs = append(t.subs, pinSub{start: e, end: e, prefix: " -f ", file: f.path})
		return nil
	}
	return unpinnable("make has no Makefile in %s to pin (one made later would run unseen)", p.cwd)
}

// File kinds: how a pinned file's own content is analysed.
type pinKind int

const (
	kindAsIs     pinKind = iota // copied as it is (an interpreter's script)
	kindShell                   // a shell script: analysed like a line
	kindProgram                 // run directly: a shell script unless it names another interpreter
	kindMakefile                // a Makefile
)

// pinWord pins the file word names (relative to the cwd) when it lies
// where the workspace can change it, and replaces the word with the
// copy's path.
func (p *pinner) pinWord(t *pinTemplate, w *syntax.Word, kind pinKind) error {
	v, ok := lit(w)
	if !ok {
		return unpinnable("the file %q is chosen when the hook runs", wordText(t.text, w))
	}
	abs := v
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(p.cwd, v)
	}
	abs = filepath.Clean(abs)
	if p.inWritable(abs) == "" {
		return nil
	}
	f, err := p.pin(abs, kind)
	if err != nil {
		return err
	}
	s, e := span(w)
	t.subs = append(t.subs, pinSub{start: s, end: e, file: f.path})
	return nil
}

// pin reads abs once and analyses its content by kind.
func (p *pinner) pin(abs string, kind pinKind) (*pinnedFile, error) {
	if f, ok := p.files[abs]; ok {
		return f, nil
	}
	if p.visiting[abs] {
		return nil, unpinnable("%s runs itself", abs)
	}
	if len(p.files) >= maxPinnedFiles {
		return nil, unpinnable("the hooks run more than %d workspace files", maxPinnedFiles)
	}
	// Read as the file tools read: no .git or .env on the real path, not
	// under a denied path (~/.ssh with the home directory as the
	// workspace), one link; else the copy would carry what the sandbox
	// keeps from commands to where they can read it.
	w := p.inWritable(abs)
	data, size, err := runtime.ReadWorkspaceFile(abs, w, w, p.denied, maxPinnedFileBytes+1)
	if err != nil {
		return nil, unpinnable("%s cannot be read (%v); a file made later would run unseen", abs, err)
	}
	if size > maxPinnedFileBytes {
		return nil, unpinnable("%s is larger than %d bytes", abs, maxPinnedFileBytes)
	}
	f := &pinnedFile{path: abs, data: data}
	p.visiting[abs] = true
	defer delete(p.visiting, abs)
	if kind == kindProgram && isShellScript(data) {
		kind = kindShell
	}
	switch kind {
	case kindShell:
		if f.tmpl, err = p.line(string(data)); err != nil {
			return nil, fmt.Errorf("%s: %w", abs, err)
		}
	case kindMakefile:
		if f.tmpl, err = p.makefile(string(data)); err != nil {
			return nil, fmt.Errorf("%s: %w", abs, err)
		}
	}
	p.files[abs] = f
	return f, nil
}

// isShellScript reports whether data runs as a shell script when
// executed: a shell #! line, or text without one (the shell runs it).
func isShellScript(data []byte) bool {
	if bytes.HasPrefix(data, []byte("\x7fELF")) || bytes.IndexByte(data, 0) >= 0 {
		return false
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if !bytes.HasPrefix(first, []byte("#!")) {
		return true
	}
	f := strings.Fields(string(first[2:]))
	if len(f) == 0 {
		return true
	}
	prog := filepath.Base(f[0])
	if prog == "env" {
		for _, a := range f[1:] {
			if !strings.HasPrefix(a, "-") {
				prog = a
				break
			}
		}
	}
	return policy.IsShell(prog)
}

// Makefile directives that read or run what the pinned copy cannot hold.
// Compiled on first use: not every start reads a Makefile.
var (
	makeIncludes = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*-?(include|sinclude|load)(\s|$)`) })
	makeShellVar = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*(override\s+)?(export\s+)?(SHELL|\.SHELLFLAGS|MAKEFLAGS|MFLAGS)\s*(::?=|\+=|\?=|!=|=)`)
	})
)

// makefile analyses a Makefile: its recipes and $(shell ...) calls as
// shell code (make's own references masked), refusing what reads other
// Makefiles or changes how recipes run.
func (p *pinner) makefile(src string) (*pinTemplate, error) {
	if strings.Contains(src, "$(eval") || strings.Contains(src, "${eval") {
		return nil, unpinnable("$(eval ...) builds Makefile text when make runs")
	}
	t := &pinTemplate{text: src}
	off := 0
	for _, line := range strings.SplitAfter(src, "\n") {
		start := off
		off += len(line)
		body := strings.TrimRight(line, "\n")
		if strings.HasPrefix(body, "\t") {
			// A recipe line: @, - and + prefixes are make's.
			code := []byte(body[1:])
			for i := 0; i < len(code) && strings.ContainsRune("@-+ \t", rune(code[i])); i++ {
				code[i] = ' '
			}
			if err := p.maskedShell(t, string(code), start+1); err != nil {
				return nil, err
			}
			continue
		}
		if makeIncludes().MatchString(body) {
			return nil, unpinnable("the Makefile reads other files (%s)", strings.TrimSpace(body))
		}
		if makeShellVar().MatchString(body) {
			return nil, unpinnable("the Makefile sets how recipes run (%s)", strings.TrimSpace(body))
		}
		for _, m := range makeShellCall(body) {
			if err := p.maskedShell(t, body[m[0]:m[1]], start+m[0]); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// maskedShell analyses recipe text as shell code, make's references
// ($(X), ${X}, $@) masked with the same number of underscores (so spans
// keep their offsets); recursive make refuses.
func (p *pinner) maskedShell(t *pinTemplate, code string, at int) error {
	masked, refs := maskMake(code)
	for _, r := range refs {
		if r == "$(MAKE)" || r == "${MAKE}" {
			return unpinnable("a recipe runs make again, which reads the Makefile from disk")
		}
	}
	for _, m := range makeShellCall(code) {
		if err := p.maskedShell(t, code[m[0]:m[1]], at+m[0]); err != nil {
			return err
		}
	}
	inner, err := p.line(masked)
	if err != nil {
		return err
	}
	for _, s := range inner.subs {
		s.start += at
		s.end += at
		t.subs = append(t.subs, s)
	}
	return nil
}

// maskMake replaces make's references in s by underscores ($$ by "$_",
// the shell's own dollar), returning them.
func maskMake(s string) (string, []string) {
	b := []byte(s)
	var refs []string
	for i := 0; i < len(b); i++ {
		if b[i] != '$' || i+1 >= len(b) {
			continue
		}
		switch c := b[i+1]; c {
		case '$':
			b[i+1] = '_'
			i++
		case '(', '{':
			end := matchClose(s, i+1)
			refs = append(refs, s[i:end])
			for k := i; k < end; k++ {
				b[k] = '_'
			}
			i = end - 1
		default:
			refs = append(refs, s[i:i+2])
			b[i], b[i+1] = '_', '_'
			i++
		}
	}
	return string(b), refs
}

// matchClose returns the index after the bracket closing the one at open.
func matchClose(s string, open int) int {
	o, c := s[open], byte(')')
	if o == '{' {
		c = '}'
	}
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case o:
			depth++
		case c:
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// makeShellCall finds the arguments of $(shell ...) and ${shell ...} in s.
func makeShellCall(s string) [][2]int {
	var out [][2]int
	for _, open := range []string{"$(shell ", "${shell "} {
		for i := 0; ; {
			j := strings.Index(s[i:], open)
			if j < 0 {
				break
			}
			j += i
			end := matchClose(s, j+1)
			out = append(out, [2]int{j + len(open), max(j+len(open), end-1)})
			i = end
		}
	}
	return out
}
