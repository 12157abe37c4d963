package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/acp-agent/acp-agent/policy"
)

// BenchmarkGlobStampedScan is the walk of a command's checkpoint scan in
// a large repository: "**" with its 2,000-path limit, each file's stamp
// taken, in a tree of 100 directories × 100 files (the scan stops in
// the 20th).
func BenchmarkGlobStampedScan(b *testing.B) {
	dir := b.TempDir()
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.txt", f)), []byte("x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	f, err := NewLocalFS(policy.FS{Roots: []string{dir}, DeniedPathPrefixes: policy.DefaultDeniedPrefixes()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		paths, truncated, err := f.GlobStamped(ctx, dir, "**", GlobOptions{Max: 2000})
		if err != nil || !truncated || len(paths) != 2000 {
			b.Fatal(len(paths), truncated, err)
		}
	}
}
