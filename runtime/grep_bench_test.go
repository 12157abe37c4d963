package runtime

import (
	"bytes"
	"context"
	"io/fs"
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

// BenchmarkLineMatcher is the matcher alone over Go's source tree read
// into memory, per pattern kind (MB/s of text scanned).
func BenchmarkLineMatcher(b *testing.B) {
	src := filepath.Join(goRoot(b), "src")
	var text [][]byte
	var size int64
	_ = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && size < 64<<20 {
			if data, err := os.ReadFile(p); err == nil && bytes.IndexByte(data, 0) < 0 {
				text = append(text, data)
				size += int64(len(data))
			}
		}
		return nil
	})
	if len(text) == 0 {
		b.Skip("no Go source tree at", src)
	}
	for _, bc := range []struct {
		name, pattern string
		ignoreCase    bool
	}{
		{"literal", "func NewReader", false},
		{"literal-ignore-case", "func newreader", true},
		{"alternation", "NewReader|NewWriter|NewDecoder", false},
		{"regexp-with-literal", `func\s+\(\w+ \*Reader\)`, false},
		{"regexp", `[0-9]{7}[a-f]{4}`, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m, err := newLineMatcher(bc.pattern, bc.ignoreCase)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			for b.Loop() {
				for _, data := range text {
					m.matchLines(data, 1000, func(int, []byte) {})
				}
			}
		})
	}
}
