package tools_test

import "testing"

var tree = map[string]string{
	"a.go":          "package a\n\nfunc A() int {\n\treturn 1\n}\n",
	"sub/b.go":      "package sub // TODO(x)\n",
	"sub/c_test.go": "package sub\n",
	".gitignore":    "gen/\n",
	"gen/z.go":      "package gen // TODO\n",
	".env":          "SECRET=1\n",
}

func TestListDirectory(t *testing.T) {
	runChecks(t, "list_directory", tree, []check{
		{name: "the root by default: directories marked, sizes, denied names left out", args: `{}`,
			has: []string{".gitignore (5 bytes)\na.go (38 bytes)\ngen/\nsub/\n"}, title: "List `.`"},
		{name: "a subdirectory", args: `{"path":"sub"}`, has: []string{"b.go (23 bytes)\nc_test.go (12 bytes)\n"}, title: "List `sub`"},
		{name: "a missing directory", args: `{"path":"missing"}`, err: true, has: []string{"no such file or directory"}},
		{name: "outside the workspace", args: `{"path":".."}`, err: true, has: []string{"Permission denied"}},
		{name: "a path that is not a string", args: `{"path":3}`, err: true, has: []string{refused, "/path"}},
	})
}

func TestGlob(t *testing.T) {
	runChecks(t, "glob", tree, []check{
		{name: "across directories, sorted, without what git ignores", args: `{"pattern":"**/*.go"}`, has: []string{"a.go\nsub/b.go\nsub/c_test.go"}, title: "Find `**/*.go` in `.`"},
		{name: "what git ignores on request", args: `{"pattern":"**/*.go","include_ignored":true}`, has: []string{"a.go\ngen/z.go\nsub/b.go\nsub/c_test.go"}},
		{name: "from a directory, paths still from the root", args: `{"pattern":"*_test.go","path":"sub"}`, has: []string{"sub/c_test.go"}, title: "Find `*_test.go` in `sub`"},
		{name: "alternatives", args: `{"pattern":"{a,gen/z}.go","include_ignored":true}`, has: []string{"a.go\ngen/z.go"}},
		{name: "nothing matches", args: `{"pattern":"*.rs"}`, has: []string{"No matches."}},
		{name: "outside the workspace", args: `{"pattern":"*","path":"/"}`, err: true, has: []string{"Permission denied"}},
		{name: "an empty pattern", args: `{"pattern":""}`, err: true, has: []string{refused, "/pattern"}},
	})
}

func TestGrep(t *testing.T) {
	runChecks(t, "grep", tree, []check{
		{name: "path:line: text, without what git ignores", args: `{"pattern":"TODO"}`, has: []string{"sub/b.go:1: package sub // TODO(x)\n"}, title: "Search `TODO` in `.`"},
		{name: "files only, ignored files included", args: `{"pattern":"TODO","include_ignored":true,"files_only":true}`, has: []string{"gen/z.go\nsub/b.go\n"}},
		{name: "plain text, any case", args: `{"pattern":"todo(","fixed_strings":true,"ignore_case":true}`, has: []string{"sub/b.go:1:"}},
		{name: "context lines", args: `{"pattern":"func A","context":1}`, has: []string{"a.go-2- \na.go:3: func A() int {\na.go-4- \treturn 1\n"}},
		{name: "include filters names", args: `{"pattern":"package","include":"*_test.go"}`, has: []string{"sub/c_test.go:1: package sub\n"}},
		{name: "a stop at max_matches", args: `{"pattern":"package","max_matches":1}`, has: []string{"[... stopped after 1 matches"}},
		{name: "no match", args: `{"pattern":"nowhere"}`, has: []string{"No matches."}},
		{name: "an invalid regular expression", args: `{"pattern":"("}`, err: true, has: []string{`invalid pattern "("`}},
		{name: "denied files are not searched", args: `{"pattern":"SECRET","include_ignored":true}`, has: []string{"No matches."}},
		{name: "too much context", args: `{"pattern":"x","context":11}`, err: true, has: []string{refused, "/context"}},
		{name: "max_matches 0", args: `{"pattern":"x","max_matches":0}`, err: true, has: []string{refused, "/max_matches"}},
	})
}
