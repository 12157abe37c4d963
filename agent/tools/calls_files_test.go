package tools_test

import (
	"strings"
	"testing"
)

// The schema's refusal, as the model reads it.
const refused = "the arguments do not match the tool's schema"

var fiveLines = map[string]string{"a.txt": "one\ntwo\nthree\nfour\nfive\n", "main.go": "package main\n", ".env": "SECRET=1\n", "sub/b.txt": "b\n"}

func TestReadFile(t *testing.T) {
	runChecks(t, "read_file", fiveLines, []check{
		{name: "whole file, numbered", args: `{"path":"a.txt"}`, has: []string{"     1\tone\n", "     5\tfive\n"}, title: "Read `a.txt`"},
		{name: "a page, and where to go on", args: `{"path":"a.txt","offset":2,"limit":2}`,
			has: []string{"     2\ttwo\n     3\tthree\n[lines 2–3 of 5; continue with offset=4]"}, title: "Read `a.txt` (lines 2–3)"},
		{name: "the last page says so", args: `{"path":"a.txt","offset":4}`, has: []string{"     4\tfour\n     5\tfive\n[lines 4–5 of 5; end of file]"}},
		{name: "names are case-sensitive", args: `{"path":"SUB/b.txt"}`, err: true, has: []string{"does not exist"}},
		{name: "offset past the end", args: `{"path":"a.txt","offset":9}`, err: true, has: []string{"offset 9 is past the end: a.txt has 5 lines"}},
		{name: "a close name is suggested", args: `{"path":"mian.go"}`, err: true, has: []string{"mian.go does not exist. Did you mean main.go?"}},
		{name: "outside the workspace", args: `{"path":"../outside.txt"}`, err: true, has: []string{"Permission denied"}},
		{name: "a denied name", args: `{"path":".env"}`, err: true, has: []string{"Permission denied"}},
		{name: "offset 0 breaks the schema", args: `{"path":"a.txt","offset":0}`, err: true, has: []string{refused, "/offset"}},
		{name: "no path", args: `{}`, err: true, has: []string{refused, "'path'"}},
		{name: "an unknown argument", args: `{"path":"a.txt","lines":3}`, err: true, has: []string{refused, "lines"}},
	})
}

func TestWriteFile(t *testing.T) {
	runChecks(t, "write_file", fiveLines, []check{
		{name: "a new file and its directories", args: `{"path":"d/e/new.txt","content":"x\ny\n"}`,
			has: []string{"Created d/e/new.txt (2 lines)."}, title: "Write `d/e/new.txt`", files: map[string]string{"d/e/new.txt": "x\ny\n"}},
		{name: "an existing file not read is kept", args: `{"path":"a.txt","content":"gone"}`, err: true,
			has: []string{"refusing to overwrite a.txt: it exists and you have not read it"}, files: map[string]string{"a.txt": fiveLines["a.txt"]}},
		{name: "outside the workspace", args: `{"path":"../w.txt","content":"x"}`, err: true, has: []string{"Permission denied"}},
		{name: "a denied name", args: `{"path":".env","content":"SECRET=2\n"}`, err: true, files: map[string]string{".env": "SECRET=1\n"}},
		{name: "inside .git", args: `{"path":".git/config","content":"x"}`, err: true, files: map[string]string{".git/config": missing}},
		{name: "no content", args: `{"path":"c.txt"}`, err: true, has: []string{refused, "'content'"}, files: map[string]string{"c.txt": missing}},
	})
}

// write_file overwrites a file only after the session read it, and not
// once it changed since.
func TestWriteFileOverwritesOnlyWhatWasRead(t *testing.T) {
	f := newFixture(t, fiveLines)
	check{args: `{"path":"a.txt"}`}.verify(t, f.call("read_file", `{"path":"a.txt"}`))
	check{has: []string{"Replaced a.txt (1 lines)."}}.verify(t, f.call("write_file", `{"path":"a.txt","content":"new\n"}`))
	f.expectFiles(t, map[string]string{"a.txt": "new\n"})

	writeFile(t, f.root+"/a.txt", "the user's edit\n")
	check{err: true, has: []string{"it changed since you last read it"}}.verify(t, f.call("write_file", `{"path":"a.txt","content":"mine\n"}`))
	f.expectFiles(t, map[string]string{"a.txt": "the user's edit\n"})
}

var goFile = map[string]string{"a.go": "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n", "crlf.txt": "one\r\ntwo\r\n"}

func TestEditFile(t *testing.T) {
	runChecks(t, "edit_file", goFile, []check{
		{name: "a unique replacement, with the lines around it", args: `{"path":"a.go","old_string":"func A() int {\n\treturn 1","new_string":"func A() int {\n\treturn 2"}`,
			has: []string{"Edited a.go: 1 replacement, the first at line 3.", "The edited lines now read:", "     4\t\treturn 2"}, title: "Edit `a.go`",
			files: map[string]string{"a.go": strings.Replace(goFile["a.go"], "return 1", "return 2", 1)}},
		{name: "every occurrence with replace_all", args: `{"path":"a.go","old_string":"return 1","new_string":"return 0","replace_all":true}`,
			has: []string{"2 replacements, the first at line 4."}, files: map[string]string{"a.go": strings.ReplaceAll(goFile["a.go"], "return 1", "return 0")}},
		{name: "ambiguous: nothing changes", args: `{"path":"a.go","old_string":"return 1","new_string":"return 2"}`, err: true,
			has: []string{"old_string occurs 2 times in a.go", "set replace_all"}, files: map[string]string{"a.go": goFile["a.go"]}},
		{name: "not found", args: `{"path":"a.go","old_string":"return 9","new_string":"x"}`, err: true,
			has: []string{"old_string was not found in a.go"}, files: map[string]string{"a.go": goFile["a.go"]}},
		{name: "trailing whitespace is forgiven, and said", args: `{"path":"a.go","old_string":"func B() int {  \n\treturn 1","new_string":"func B() int {\n\treturn 3"}`,
			has: []string{"matched ignoring trailing whitespace"}, files: map[string]string{"a.go": strings.Replace(goFile["a.go"], "B() int {\n\treturn 1", "B() int {\n\treturn 3", 1)}},
		{name: "CRLF is kept", args: `{"path":"crlf.txt","old_string":"two","new_string":"2"}`, files: map[string]string{"crlf.txt": "one\r\n2\r\n"}},
		{name: "a missing file", args: `{"path":"nope.go","old_string":"x","new_string":"y"}`, err: true,
			has: []string{"nope.go does not exist; use write_file"}, files: map[string]string{"nope.go": missing}},
		{name: "outside the workspace", args: `{"path":"../a.go","old_string":"x","new_string":"y"}`, err: true, has: []string{"Permission denied"}},
		{name: "an empty old_string", args: `{"path":"a.go","old_string":"","new_string":"x"}`, err: true, has: []string{refused, "/old_string"}},
		{name: "no new_string", args: `{"path":"a.go","old_string":"x"}`, err: true, has: []string{refused, "'new_string'"}},
	})
}

func TestMultiEdit(t *testing.T) {
	runChecks(t, "multi_edit", goFile, []check{
		{name: "in order, each on the last's result", args: `{"path":"a.go","edits":[{"old_string":"func A","new_string":"func AA"},{"old_string":"func AA() int {\n\treturn 1","new_string":"func AA() int {\n\treturn 7"}]}`,
			has: []string{"Edited a.go: 2 edits, 2 replacements, the first at line 3."}, title: "Edit `a.go` (2 changes)",
			files: map[string]string{"a.go": "package a\n\nfunc AA() int {\n\treturn 7\n}\n\nfunc B() int {\n\treturn 1\n}\n"}},
		{name: "all or nothing", args: `{"path":"a.go","edits":[{"old_string":"func A","new_string":"func AA"},{"old_string":"zzz","new_string":"y"}]}`, err: true,
			has: []string{"edit 2 of 2: old_string was not found", "nothing was written"}, files: map[string]string{"a.go": goFile["a.go"]}},
		{name: "no edits", args: `{"path":"a.go","edits":[]}`, err: true, has: []string{refused, "/edits"}},
		{name: "an edit without old_string", args: `{"path":"a.go","edits":[{"new_string":"y"}]}`, err: true, has: []string{refused, "/edits/0"}},
	})
}

func TestApplyPatch(t *testing.T) {
	runChecks(t, "apply_patch", goFile, []check{
		{name: "a file added and one updated", args: `{"patch":"*** Begin Patch\n*** Add File: new/n.txt\n+hello\n*** Update File: a.go\n@@ func B() int {\n-\treturn 1\n+\treturn 4\n }\n*** End Patch"}`,
			has: []string{"Patched new/n.txt (added), a.go (updated)."}, title: "Patch `new/n.txt`, `a.go`",
			files: map[string]string{"new/n.txt": "hello\n", "a.go": "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 4\n}\n"}},
		{name: "a hunk not found: nothing written", args: `{"patch":"*** Begin Patch\n*** Add File: n.txt\n+x\n*** Update File: a.go\n@@\n-nothing like this\n+x\n*** End Patch"}`, err: true,
			has: []string{"a.go: hunk 1: its context and removed lines were not found"}, files: map[string]string{"n.txt": missing, "a.go": goFile["a.go"]}},
		{name: "outside the workspace", args: `{"patch":"*** Begin Patch\n*** Add File: ../out.txt\n+x\n*** End Patch"}`, err: true, has: []string{"Permission denied"}},
		{name: "not the format", args: `{"patch":"--- a/a.go\n+++ b/a.go\n"}`, err: true, has: []string{"not a patch in the apply_patch format"}},
		{name: "an empty patch", args: `{"patch":""}`, err: true, has: []string{refused, "/patch"}},
	})
}
