package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDockerfileBuildsAStaticBinary checks what can be checked without a
// Docker engine: the Dockerfile's build command, run here as written,
// makes a static binary (no ELF interpreter, no shared libraries), which
// the distroless static image needs; the image runs serve as a non-root
// user.
func TestDockerfileBuildsAStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	require.NoError(t, err)
	df := string(data)
	m := regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0) go build (.*) -o /out/acp-agent (\./cmd/acp-agent)$`).FindStringSubmatch(df)
	require.NotNil(t, m, "the Dockerfile builds with CGO_ENABLED=0 go build ... -o /out/acp-agent ./cmd/acp-agent")
	assert.Contains(t, df, "FROM gcr.io/distroless/static")
	assert.Regexp(t, `(?m)^USER 65532:65532$`, df, "non-root")
	assert.Regexp(t, `(?m)^ENTRYPOINT \["/acp-agent", "serve"`, df)

	goBin, err := exec.LookPath("go")
	if err != nil { // the Windows test binary under Wine: the Linux run builds it
		t.Skipf("no Go toolchain to build with: %v", err)
	}
	out := filepath.Join(t.TempDir(), "acp-agent")
	args := []string{"build"}
	for _, f := range regexp.MustCompile(`"[^"]*"|\S+`).FindAllString(m[2], -1) {
		args = append(args, strings.Trim(f, `"`))
	}
	cmd := exec.Command(goBin, append(args, "-o", out, "../../cmd/acp-agent")...)
	cmd.Env = append(os.Environ(), m[1], "GOOS=linux") // the image's OS, whatever this one is
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	f, err := elf.Open(out)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "no dynamic loader")
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	assert.Empty(t, libs, "no shared libraries")
}
