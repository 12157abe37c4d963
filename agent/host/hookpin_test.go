package host

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pinner decides, for a hook line, which workspace files it runs
// (pinned) and what it runs that cannot be pinned (the hooks are then
// refused); rendering names the copies. Each refusal is an attack a
// hostile hooks file could use to run something the trust question did
// not show.
func TestPinnerPinsWhatAHookRunsAndRefusesTheRest(t *testing.T) {
	ws := t.TempDir()
	files := map[string]string{
		"scripts/check.sh":   "#!/bin/sh\n./scripts/helper.sh\n",
		"scripts/helper.sh":  "echo helper\n",
		"scripts/tool.py":    "print('x')\n",
		"scripts/sourced.sh": "echo sourced\n",
		"scripts/env.sh":     "#!/usr/bin/env bash\nsource scripts/sourced.sh\n",
		"scripts/self.sh":    "./scripts/self.sh\n",
		"scripts/dyn.sh":     "#!/bin/sh\n$TOOL --run\n",
		"scripts/bin.elf":    "\x7fELF\x00\x00",
		"Makefile":           "GO ?= go\nlint:\n\t@./scripts/helper.sh\n\t$(GO) vet ./...\nv := $(shell ./scripts/helper.sh)\n",
		"inc.mk":             "-include x.mk\nall:\n\ttrue\n",
		"shell.mk":           "SHELL := ./scripts/helper.sh\nall:\n\ttrue\n",
		"eval.mk":            "$(eval X := 1)\nall:\n\ttrue\n",
		"rec.mk":             "all:\n\t$(MAKE) other\n",
		"runner.mk":          "all:\n\tnpm test\n",
	}
	for p, c := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, p), []byte(c), 0o755))
	}
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.sh"), []byte("echo secret\n"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.sh"), filepath.Join(ws, "scripts", "link.sh")))

	pinned := func(rel ...string) []string {
		var out []string
		for _, r := range rel {
			out = append(out, filepath.Join(ws, r))
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		line   string
		pinned []string // nil with refuse
		refuse bool
	}{
		{line: "jq -r .tool | grep -q rm && exit 2; echo ok", pinned: pinned()},
		{line: "./scripts/check.sh --fast", pinned: pinned("scripts/check.sh", "scripts/helper.sh")},
		{line: "bash scripts/check.sh", pinned: pinned("scripts/check.sh", "scripts/helper.sh")},
		{line: "sh -e -c './scripts/helper.sh && echo done'", pinned: pinned("scripts/helper.sh")},
		{line: "python3 -u scripts/tool.py arg", pinned: pinned("scripts/tool.py")},
		{line: "python3 -c 'print(1)'", pinned: pinned()},
		{line: "source scripts/sourced.sh", pinned: pinned("scripts/sourced.sh")},
		{line: "./scripts/env.sh", pinned: pinned("scripts/env.sh", "scripts/sourced.sh")},
		{line: "eval './scripts/helper.sh'", pinned: pinned("scripts/helper.sh")},
		{line: "exec ./scripts/helper.sh", pinned: pinned("scripts/helper.sh")},
		{line: "./scripts/bin.elf", pinned: pinned("scripts/bin.elf")},
		{line: "make -s lint", pinned: pinned("Makefile", "scripts/helper.sh")},
		{line: "echo $(./scripts/helper.sh)", pinned: pinned("scripts/helper.sh")},
		{line: "f() { ./scripts/helper.sh; }; f", pinned: pinned("scripts/helper.sh")},
		{line: "/usr/bin/env true", refuse: true},
		{line: "$TOOL run", refuse: true},
		{line: `"$(cat tool.txt)"`, refuse: true},
		{line: "./scripts/missing.sh", refuse: true},
		{line: "bash", refuse: true},
		{line: "cat x | sh", refuse: true},
		{line: "bash -s < scripts/helper.sh", refuse: true},
		{line: `bash -c "$X"`, refuse: true},
		{line: "python3 -m pkg", refuse: true},
		{line: "node -r ./hook.js x.js", refuse: true},
		{line: "python3 -", refuse: true},
		{line: "timeout 5 ./scripts/helper.sh", refuse: true},
		{line: "xargs ./scripts/helper.sh", refuse: true},
		{line: "find . -exec ./scripts/helper.sh {} +", refuse: true},
		{line: "LD_PRELOAD=./x.so ls", refuse: true},
		{line: "export BASH_ENV=./scripts/helper.sh; bash -c true", refuse: true},
		{line: "PATH=./scripts:$PATH helper.sh", refuse: true},
		{line: "npm run lint", refuse: true},
		{line: "go test ./...", refuse: true},
		{line: "cargo check", refuse: true},
		{line: "make -C sub all", refuse: true},
		{line: "make -f inc.mk", refuse: true},
		{line: "make -f shell.mk", refuse: true},
		{line: "make -f eval.mk", refuse: true},
		{line: "make -f rec.mk", refuse: true},
		{line: "make -f runner.mk", refuse: true},
		{line: "make CC=./scripts/helper.sh", refuse: true},
		{line: "./scripts/self.sh", refuse: true},
		{line: "./scripts/dyn.sh", refuse: true},
		{line: "./scripts/link.sh", refuse: true},
		{line: "hash -p ./scripts/helper.sh ls; ls", refuse: true},
		{line: "trap \"$X\" EXIT", refuse: true},
		{line: "source <(cat scripts/helper.sh)", refuse: true},
		{line: "ls 'unterminated", refuse: true},
	} {
		p := newPinner(ws, []string{ws}, "/usr/local/bin:/usr/bin:/bin", nil)
		_, err := p.line(tc.line)
		if tc.refuse {
			assert.ErrorIs(t, err, errUnpinnable, "%s", tc.line)
			continue
		}
		if !assert.NoError(t, err, "%s", tc.line) {
			continue
		}
		var got []string
		for _, f := range p.sortedFiles() {
			got = append(got, f.path)
		}
		assert.Equal(t, tc.pinned, append([]string(nil), got...), "%s", tc.line)
	}

	// A PATH the workspace can fill fixes no bare name.
	p := newPinner(ws, []string{ws}, filepath.Join(ws, "scripts")+":/usr/bin", nil)
	_, err := p.line("helper.sh")
	assert.ErrorIs(t, err, errUnpinnable)
}

// Rendering names the copies: the hook line, a -c string and the copies
// of scripts and Makefiles, quoted for the shell.
func TestPinnedLinesNameTheCopies(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "s"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "s", "a.sh"), []byte("./s/b.sh x\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "s", "b.sh"), []byte("echo b\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "Makefile"), []byte("t:\n\t@./s/b.sh\n"), 0o644))
	p := newPinner(ws, []string{ws}, "/usr/bin:/bin", nil)
	line, err := p.line("./s/a.sh; bash -c './s/b.sh'; make t")
	require.NoError(t, err)
	paths := map[string]string{}
	for _, f := range p.sortedFiles() {
		paths[f.path] = "/pins/" + filepath.Base(f.path)
	}
	got, err := line.render(paths)
	require.NoError(t, err)
	assert.Equal(t, "/pins/a.sh; bash -c /pins/b.sh; make -f /pins/Makefile t", got)
	for _, f := range p.sortedFiles() {
		if f.tmpl == nil {
			continue
		}
		body, err := f.tmpl.render(paths)
		require.NoError(t, err)
		switch filepath.Base(f.path) {
		case "a.sh":
			assert.Equal(t, "/pins/b.sh x\n", body)
		case "Makefile":
			assert.Equal(t, "t:\n\t@/pins/b.sh\n", body)
		}
	}
}

// The trust question spells out what would display otherwise than it
// runs, and leaves ordinary text (CRLF line ends, tabs, non-Latin
// letters) as it is.
func TestVisibleSpellsOutInvisibleCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"echo ok\n\tmake\r\n":         "echo ok\n\tmake\r\n",
		"printf 'héllo, мир'\n":       "printf 'héllo, мир'\n",
		"echo a \u202e; rm x #\u202c": "echo a <U+202E>; rm x #<U+202C>",
		"a\u200bb\u2066c":             "a<U+200B>b<U+2066>c",
		"safe\rrm -rf x":              "safe<U+000D>rm -rf x",
		"# \x1b[2K\x1b[1A":            "# <U+001B>[2K<U+001B>[1A",
	} {
		assert.Equal(t, want, visible(in), "%q", in)
	}
}
