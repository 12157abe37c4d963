package runtime

import (
	"context"
	"fmt"
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
		for f := range 100 {
			writeFile(b, dir, filepath.Join(fmt.Sprintf("d%03d", d), fmt.Sprintf("f%03d.txt", f)), "x\n")
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
