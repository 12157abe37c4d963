package policy

import "testing"

func BenchmarkParseCommandLine(b *testing.B) {
	fs := newFakeSystem(b)
	const line = "go test ./... 2>&1 | head -n 50 && git status --short"
	b.ReportAllocs()
	for b.Loop() {
		cl, err := ParseCommandLine(line, fs.look)
		if err != nil || len(cl.Commands) != 3 || len(cl.Risks) != 0 {
			b.Fatalf("unexpected parse: %v %+v", err, cl)
		}
	}
}

func BenchmarkTerminalCheck(b *testing.B) {
	fs := newFakeSystem(b)
	cl, err := ParseCommandLine("go test ./... 2>&1 | head -n 50 && git status --short", fs.look)
	if err != nil {
		b.Fatal(err)
	}
	term := Terminal{AllowedCommands: []string{"ls", "git status", "go test", "head"}, Path: fs.bin}
	b.ReportAllocs()
	for b.Loop() {
		if err := term.Check(cl); err != nil {
			b.Fatal(err)
		}
	}
}
