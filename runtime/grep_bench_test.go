package runtime

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-agent/acp-agent/policy"
)

// BenchmarkGrepGoSource is LocalFS.Grep of a literal over Go's own source
// tree (about 11.5k files), the search of issue 16's figure without the
// agent around it.
func BenchmarkGrepGoSource(b *testing.B) {
	src := filepath.Join(goRoot(b), "src")
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

// goRoot is the Go installation the go command uses (runtime.GOROOT is
// where this test binary was built, which need not exist here).
func goRoot(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command:", err)
	}
	return strings.TrimSpace(string(out))
}
