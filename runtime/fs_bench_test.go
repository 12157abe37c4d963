//go:build unix

package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/acp-agent/acp-agent/policy"
)

func BenchmarkReadTextFile(b *testing.B) {
	tr := newTree(b)
	p := writeFile(b, tr.root, "pkg/small.go", "package small\n\nfunc F() int { return 1 }\n")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tr.fs.ReadTextFile(ctx, p, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// benchTree is 500 Go files of ~40 lines in 50 directories, two levels
// deep, plus a .git directory the walks must skip.
func benchTree(b *testing.B) (*LocalFS, string) {
	b.Helper()
	dir := b.TempDir()
	for i := range 500 {
		content := fmt.Sprintf("package p%d\n\n", i%50)
		for l := range 40 {
			content += fmt.Sprintf("func f%d_%d() int { return %d } // line %d\n", i, l, l, l)
		}
		if i%25 == 0 {
			content += "// TODO: needle\n"
		}
		writeFile(b, dir, filepath.Join(fmt.Sprintf("d%d", i%10), fmt.Sprintf("s%d", i%50), fmt.Sprintf("f%d.go", i)), content)
	}
	for i := range 20 {
		writeFile(b, dir, fmt.Sprintf(".git/objects/o%d", i), "TODO: needle\n")
	}
	f, err := NewLocalFS(policy.FS{Roots: []string{dir}, DeniedPathPrefixes: policy.DefaultDeniedPrefixes()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f, dir
}

func BenchmarkGrep(b *testing.B) {
	f, dir := benchTree(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		m, _, err := f.Grep(ctx, dir, GrepOptions{Pattern: `TODO: \w+`})
		if err != nil || len(m) != 20 {
			b.Fatal(len(m), err)
		}
	}
}

func BenchmarkGlob(b *testing.B) {
	f, dir := benchTree(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		paths, _, err := f.Glob(ctx, dir, "**/s1*/*.go", 0)
		if err != nil || len(paths) == 0 {
			b.Fatal(len(paths), err)
		}
	}
}

func BenchmarkWriteTextFile(b *testing.B) {
	tr := newTree(b)
	p := filepath.Join(tr.root, "pkg", "out.go")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := tr.fs.WriteTextFile(ctx, p, "package out\n"); err != nil {
			b.Fatal(err)
		}
	}
}
