package runtime

import (
	"context"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/acp-agent/acp-agent/policy"
)

// BenchmarkGrepGoSource is LocalFS.Grep of a literal over Go's own source
// tree (about 11.5k files), the search of issue 16's figure without the
// agent around it.
func BenchmarkGrepGoSource(b *testing.B) {
	src := filepath.Join(goruntime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("no Go source tree at", src)
	}
	f, err := NewLocalFS(policy.FS{Roots: []string{src}, DeniedPathPrefixes: policy.DefaultDeniedPrefixes()})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for b.Loop() {
		m, _, err := f.Grep(context.Background(), src, GrepOptions{Pattern: "func NewReader"})
		if err != nil || len(m) == 0 {
			b.Fatalf("grep: %v, %d matches", err, len(m))
		}
	}
}
