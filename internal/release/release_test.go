package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testTargets are one tar.gz and one zip target: enough to show both
// archive writers are reproducible without building all six.
var testTargets = []Target{Targets[3], Targets[5]} // linux-x86_64, windows-x86_64

func testConfig(t *testing.T, out string) Config {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return Config{Version: "0.2.0", Commit: "0123456789abcdef0123456789abcdef01234567",
		Date: time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC), Repository: "https://github.com/acp-agent/acp-agent",
		Source: src, Out: out, Targets: testTargets}
}

// The same inputs give byte-identical release files, built twice into
// different directories (different temporary build paths too); the
// checksums file lists each archive's real hash; the binary inside is
// stamped with the version, commit and date.
func TestReleaseIsReproducibleAndStamped(t *testing.T) {
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	archA, err := Build(ctx, testConfig(t, a))
	require.NoError(t, err)
	_, err = Build(ctx, testConfig(t, b))
	require.NoError(t, err)
	names := []string{SumsName, AgentJSONName, IconName}
	for _, x := range archA {
		names = append(names, x.Name)
	}
	for _, n := range names {
		da, err := os.ReadFile(filepath.Join(a, n))
		require.NoError(t, err)
		db, err := os.ReadFile(filepath.Join(b, n))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(da, db), "%s differs between two builds of the same inputs", n)
	}
	sums, err := os.ReadFile(filepath.Join(a, SumsName))
	require.NoError(t, err)
	for _, x := range archA {
		data, _ := os.ReadFile(filepath.Join(a, x.Name))
		h := sha256.Sum256(data)
		assert.Contains(t, string(sums), hex.EncodeToString(h[:])+"  "+x.Name+"\n")
	}
	assert.Equal(t, []string{"acp-agent-0.2.0-linux-x86_64.tar.gz", "acp-agent-0.2.0-windows-x86_64.zip"}, []string{archA[0].Name, archA[1].Name})

	linux := untar(t, filepath.Join(a, archA[0].Name))
	require.Contains(t, linux, "acp-agent")
	assert.Equal(t, int64(0o755), linux["acp-agent"].mode, "the binary is executable")
	assert.Equal(t, testConfig(t, a).Date, linux["acp-agent"].mtime, "entries carry the commit's time")
	win := unzip(t, filepath.Join(a, archA[1].Name))
	require.Contains(t, win, "acp-agent.exe")
	assert.Equal(t, "MZ", string(win["acp-agent.exe"][:2]), "a Windows executable")

	if goruntime.GOOS == "linux" && goruntime.GOARCH == "amd64" {
		bin := filepath.Join(t.TempDir(), "acp-agent")
		require.NoError(t, os.WriteFile(bin, linux["acp-agent"].data, 0o755))
		out, err := exec.Command(bin, "--version").Output()
		require.NoError(t, err)
		assert.Contains(t, string(out), "acp-agent 0.2.0 (commit 0123456789abcdef0123456789abcdef01234567, built 2026-11-20T10:30:00Z, linux/amd64)")
	}

	// Another date is another archive (the entries carry it; the binary
	// was shown stamped above): from the archive writer, as a third
	// build would only link the same binary again with another -X.
	files := []archiveFile{{name: "acp-agent", mode: 0o755, data: linux["acp-agent"].data}}
	var same, later bytes.Buffer
	require.NoError(t, writeTarGz(&same, files, testConfig(t, a).Date))
	require.NoError(t, writeTarGz(&later, files, testConfig(t, a).Date.Add(time.Hour)))
	assert.NotEqual(t, sha256.Sum256(same.Bytes()), sha256.Sum256(later.Bytes()), "another date is another archive")
}

type tarEntry struct {
	mode  int64
	mtime time.Time
	data  []byte
}

func untar(t *testing.T, path string) map[string]tarEntry {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	assert.Empty(t, gz.Name, "no file name in the gzip header")
	assert.True(t, gz.ModTime.IsZero() || gz.ModTime.Unix() == 0, "no time in the gzip header")
	tr := tar.NewReader(gz)
	out := map[string]tarEntry{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		assert.Zero(t, h.Uid)
		assert.Empty(t, h.Uname)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		out[h.Name] = tarEntry{mode: h.Mode, mtime: h.ModTime.UTC(), data: data}
	}
}

func unzip(t *testing.T, path string) map[string][]byte {
	t.Helper()
	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer zr.Close()
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		out[f.Name] = data
	}
	return out
}

// The generated agent.json and icon.svg pass the registry's rules, and
// each rule is really checked: a break of any one is an error.
func TestAgentJSONFollowsTheRegistryRules(t *testing.T) {
	var archives []Archive
	for _, tg := range Targets {
		archives = append(archives, Archive{Target: tg, Name: ArchiveName("0.2.0", tg), SHA256: strings.Repeat("ab", 32)})
	}
	good, err := AgentJSON("0.2.0", "https://github.com/acp-agent/acp-agent", archives)
	require.NoError(t, err)
	require.NoError(t, Validate(good, Icon, AgentID))
	var e map[string]any
	require.NoError(t, json.Unmarshal(good, &e))
	bin := e["distribution"].(map[string]any)["binary"].(map[string]any)
	assert.Len(t, bin, 6, "all six platforms")
	lin := bin["linux-x86_64"].(map[string]any)
	assert.Equal(t, "https://github.com/acp-agent/acp-agent/releases/download/v0.2.0/acp-agent-0.2.0-linux-x86_64.tar.gz", lin["archive"])
	assert.Equal(t, "./acp-agent", lin["cmd"])
	assert.Equal(t, "./acp-agent.exe", bin["windows-aarch64"].(map[string]any)["cmd"])

	entryBreaks := map[string]func(map[string]any){
		"no version":          func(m map[string]any) { delete(m, "version") },
		"two-part version":    func(m map[string]any) { m["version"] = "0.2" },
		"v-prefixed version":  func(m map[string]any) { m["version"] = "v0.2.0" },
		"bad id":              func(m map[string]any) { m["id"] = "ACP_agent" },
		"id not the dir":      func(m map[string]any) { m["id"] = "acp-agent-two" },
		"empty description":   func(m map[string]any) { m["description"] = "" },
		"relative repository": func(m map[string]any) { m["repository"] = "github.com/acp-agent" },
		"unknown distribution": func(m map[string]any) {
			m["distribution"].(map[string]any)["brew"] = map[string]any{"package": "x"}
		},
		"unknown platform": func(m map[string]any) { binOf(m)["linux-arm"] = binOf(m)["linux-x86_64"] },
		"latest": func(m map[string]any) {
			target(m)["archive"] = "https://github.com/a/b/releases/latest/download/x.tar.gz"
		},
		"other version": func(m map[string]any) {
			target(m)["archive"] = "https://github.com/acp-agent/acp-agent/releases/download/v0.1.9/x.tar.gz"
		},
		"installer":      func(m map[string]any) { target(m)["archive"] = "https://github.com/a/b/releases/download/v0.2.0/x.dmg" },
		"relative url":   func(m map[string]any) { target(m)["archive"] = "dist/x.tar.gz" },
		"short sha256":   func(m map[string]any) { target(m)["sha256"] = "abc" },
		"no cmd":         func(m map[string]any) { delete(target(m), "cmd") },
		"extra member":   func(m map[string]any) { target(m)["checksum"] = "x" },
		"args not array": func(m map[string]any) { target(m)["args"] = "acp" },
	}
	for name, brk := range entryBreaks {
		var m map[string]any
		require.NoError(t, json.Unmarshal(good, &m))
		brk(m)
		data, _ := json.Marshal(m)
		assert.Error(t, Validate(data, Icon, AgentID), name)
	}
	for name, icon := range map[string]string{
		"red fill":        `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><path fill="#ff0000" d="M0 0h16v16z"/></svg>`,
		"style stroke":    `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><path fill="currentColor" style="stroke: red" d="M0 0h16v16z"/></svg>`,
		"32x32":           `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32"><path fill="currentColor" d="M0 0h16v16z"/></svg>`,
		"not square":      `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 12"><path fill="currentColor" d="M0 0h16v12z"/></svg>`,
		"no currentColor": `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><path d="M0 0h16v16z"/></svg>`,
		"no size":         `<svg xmlns="http://www.w3.org/2000/svg"><path fill="currentColor" d="M0 0h16v16z"/></svg>`,
	} {
		assert.NotEmpty(t, ValidateIcon([]byte(icon)), name)
	}
}

func binOf(m map[string]any) map[string]any {
	return m["distribution"].(map[string]any)["binary"].(map[string]any)
}

func target(m map[string]any) map[string]any { return binOf(m)["linux-x86_64"].(map[string]any) }
