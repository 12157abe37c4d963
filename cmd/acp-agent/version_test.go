package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/internal/winetest"
)

// TestVersionFromBuildInfo: what the toolchain recorded fills in what
// the link-time stamps left at their defaults, never what they set.
func TestVersionFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-27T10:00:00Z"}}
	tests := []struct {
		name string
		main string
		set  []debug.BuildSetting
		in   [3]string
		want [3]string
	}{
		{"go install @tag", "v0.2.0", nil, [3]string{"0.1.0-dev", "unknown", "unknown"}, [3]string{"0.2.0", "unknown", "unknown"}},
		{"a checkout", "(devel)", vcs, [3]string{"0.1.0-dev", "unknown", "unknown"}, [3]string{"0.1.0-dev", "abc123", "2026-11-27T10:00:00Z"}},
		{"a checkout with changes", "v0.0.0-20261127103151-e4268c7f1475+dirty",
			append([]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, vcs...),
			[3]string{"0.1.0-dev", "unknown", "unknown"}, [3]string{"0.1.0-dev", "abc123 with local changes", "2026-11-27T10:00:00Z"}},
		{"stamped by make or a release", "v0.2.0", vcs, [3]string{"0.3.0", "def456", "2026-01-01T00:00:00Z"}, [3]string{"0.3.0", "def456", "2026-01-01T00:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Version: tt.main}, Settings: tt.set}
			v, c, d := fromBuildInfo(bi, tt.in[0], tt.in[1], tt.in[2])
			assert.Equal(t, tt.want, [3]string{v, c, d})
		})
	}
}

// TestBinaryVersionOfAPlainGoBuild: the README's `go install
// ./cmd/acp-agent` builds without make's stamps; --version said "commit
// unknown, built unknown" then, useless in a bug report. Built in a git
// checkout, it now gives the commit and its time the toolchain recorded.
func TestBinaryVersionOfAPlainGoBuild(t *testing.T) {
	if winetest.Active {
		t.Skip("builds with the Go toolchain, which Wine's tests do not have")
	}
	bin := filepath.Join(t.TempDir(), "acp-agent")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("no build with VCS stamps here (no git, or not a checkout): %v\n%s", err, out)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	require.NoError(t, err)
	rev := regexp.MustCompile(`vcs\.revision=([0-9a-f]+)`).FindSubmatch(info)
	when := regexp.MustCompile(`vcs\.time=(\S+)`).FindSubmatch(info)
	if rev == nil || when == nil {
		// Go records nothing in a git worktree (.git is a file there).
		t.Skipf("the toolchain recorded no commit for this checkout:\n%s", info)
	}
	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	line, _, _ := strings.Cut(string(out), "\n")
	assert.Contains(t, line, "(commit "+string(rev[1]))
	assert.Contains(t, line, "built "+string(when[1])+",")
	assert.NotContains(t, line, "unknown")
}
