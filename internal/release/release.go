// Package release builds acp-agent's release: a reproducible archive per
// target (tar.gz on Linux and macOS, zip on Windows) of a binary built
// with -trimpath and the version, commit and date stamped in, a
// SHA256SUMS file, and the ACP registry's agent.json and icon.svg
// (docs/releasing.md). The same inputs (source, Go toolchain, Config)
// give byte-identical files: archive entries carry the commit's time,
// no owner, fixed modes, and gzip headers no name or time.
//
// Validate checks an agent.json and icon.svg against the registry's
// rules. Nothing here is safe for concurrent use with the same Out.
package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Target is one release platform: Go's names and the registry's.
type Target struct {
	GOOS, GOARCH string
	// Platform is the registry's key ("darwin-aarch64").
	Platform string
}

// Targets are the six platforms the registry knows, in its order.
var Targets = []Target{
	{"darwin", "arm64", "darwin-aarch64"},
	{"darwin", "amd64", "darwin-x86_64"},
	{"linux", "arm64", "linux-aarch64"},
	{"linux", "amd64", "linux-x86_64"},
	{"windows", "arm64", "windows-aarch64"},
	{"windows", "amd64", "windows-x86_64"},
}

// Config is what a release is built from.
type Config struct {
	// Version is x.y.z (no "v"); the tag is "v" + Version.
	Version string
	// Commit is the source's commit hash; Date its commit time, which
	// is also every archive entry's time (SOURCE_DATE_EPOCH).
	Commit string
	Date   time.Time
	// Repository is the GitHub repository the archives are published
	// in ("https://github.com/acp-agent/acp-agent").
	Repository string
	// Source is the module directory; Out where the files go.
	Source, Out string
	// Go is the go command; "" means "go".
	Go string
	// Targets to build; nil means all of Targets.
	Targets []Target
}

// Archive is one built archive.
type Archive struct {
	Target Target
	Name   string // file name in Out
	SHA256 string
}

// Files beside the archives.
const (
	AgentJSONName = "agent.json"
	IconName      = "icon.svg"
	SumsName      = "SHA256SUMS"
	// AgentID is the registry id (and the registry directory's name).
	AgentID = "acp-agent"
)

// Icon is the registry icon: 16x16, one colour, currentColor.
//
//go:embed icon.svg
var Icon []byte

var semver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// Build builds every target and writes the archives, SHA256SUMS,
// agent.json and icon.svg to cfg.Out.
func Build(ctx context.Context, cfg Config) ([]Archive, error) {
	if !semver.MatchString(cfg.Version) {
		return nil, fmt.Errorf("release: version %q is not x.y.z", cfg.Version)
	}
	if cfg.Commit == "" || cfg.Date.IsZero() || cfg.Repository == "" {
		return nil, errors.New("release: commit, date and repository are required")
	}
	if cfg.Go == "" {
		cfg.Go = "go"
	}
	targets := cfg.Targets
	if targets == nil {
		targets = Targets
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "acp-agent-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	var archives []Archive
	for _, t := range targets {
		a, err := buildTarget(ctx, cfg, t, work)
		if err != nil {
			return nil, err
		}
		archives = append(archives, a)
	}
	var sums strings.Builder
	sorted := slices.Clone(archives)
	slices.SortFunc(sorted, func(a, b Archive) int { return strings.Compare(a.Name, b.Name) })
	for _, a := range sorted {
		fmt.Fprintf(&sums, "%s  %s\n", a.SHA256, a.Name)
	}
	agentJSON, err := AgentJSON(cfg.Version, cfg.Repository, archives)
	if err != nil {
		return nil, err
	}
	for name, data := range map[string][]byte{SumsName: []byte(sums.String()), AgentJSONName: agentJSON, IconName: Icon} {
		if err := os.WriteFile(filepath.Join(cfg.Out, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	return archives, nil
}

// binaryName is the executable's name in the archive.
func binaryName(t Target) string {
	if t.GOOS == "windows" {
		return "acp-agent.exe"
	}
	return "acp-agent"
}

// ArchiveName is the archive file of version for t.
func ArchiveName(version string, t Target) string {
	ext := ".tar.gz"
	if t.GOOS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("acp-agent-%s-%s%s", version, t.Platform, ext)
}

// LDFlags stamps version, commit and date into the binary (-s -w: no
// symbol table or DWARF; -buildid= keeps no path-derived build id).
func LDFlags(version, commit string, date time.Time) string {
	return fmt.Sprintf("-s -w -buildid= -X main.version=%s -X main.commit=%s -X main.date=%s",
		version, commit, date.UTC().Format(time.RFC3339))
}

func buildTarget(ctx context.Context, cfg Config, t Target, work string) (Archive, error) {
	bin := filepath.Join(work, t.Platform, binaryName(t))
	cmd := exec.CommandContext(ctx, cfg.Go, "build", "-trimpath", "-buildvcs=false",
		"-ldflags", LDFlags(cfg.Version, cfg.Commit, cfg.Date), "-o", bin, "./cmd/acp-agent")
	cmd.Dir = cfg.Source
	cmd.Env = append(os.Environ(), "GOOS="+t.GOOS, "GOARCH="+t.GOARCH, "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Archive{}, fmt.Errorf("release: build %s: %v\n%s", t.Platform, err, out)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return Archive{}, err
	}
	files := []archiveFile{{name: binaryName(t), mode: 0o755, data: exe}}
	for _, doc := range []string{"README.md", "LICENSE"} {
		if data, err := os.ReadFile(filepath.Join(cfg.Source, doc)); err == nil {
			files = append(files, archiveFile{name: doc, mode: 0o644, data: data})
		}
	}
	var buf bytes.Buffer
	if t.GOOS == "windows" {
		err = writeZip(&buf, files, cfg.Date)
	} else {
		err = writeTarGz(&buf, files, cfg.Date)
	}
	if err != nil {
		return Archive{}, err
	}
	name := ArchiveName(cfg.Version, t)
	if err := os.WriteFile(filepath.Join(cfg.Out, name), buf.Bytes(), 0o644); err != nil {
		return Archive{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return Archive{Target: t, Name: name, SHA256: hex.EncodeToString(sum[:])}, nil
}

type archiveFile struct {
	name string
	mode int64
	data []byte
}

// writeTarGz writes files with nothing that varies between builds: the
// given time, no owner, a gzip header without name or time.
func writeTarGz(w io.Writer, files []archiveFile, date time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: date.UTC().Truncate(time.Second),
			Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// writeZip writes files with the given time and Unix modes (so unzip
// keeps the binary executable where that matters).
func writeZip(w io.Writer, files []archiveFile, date time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range files {
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: date.UTC().Truncate(2 * time.Second)}
		hdr.SetMode(os.FileMode(f.mode))
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// agentEntry is the registry's agent.json.
type agentEntry struct {
	ID           string                 `json:"id"`
	Name         string                 `json:"name"`
	Version      string                 `json:"version"`
	Description  string                 `json:"description"`
	Repository   string                 `json:"repository"`
	Website      string                 `json:"website,omitempty"`
	Authors      []string               `json:"authors"`
	License      string                 `json:"license,omitempty"`
	Distribution map[string]interface{} `json:"distribution"`
}

type binaryTarget struct {
	Archive string   `json:"archive"`
	SHA256  string   `json:"sha256"`
	Cmd     string   `json:"cmd"`
	Args    []string `json:"args,omitempty"`
}

// AgentJSON is the registry entry for version: each archive's URL in the
// repository's GitHub release v<version>, its checksum, and the command
// to run in it (the agent speaks ACP on stdio with no arguments).
func AgentJSON(version, repository string, archives []Archive) ([]byte, error) {
	bin := map[string]binaryTarget{}
	for _, a := range archives {
		bin[a.Target.Platform] = binaryTarget{
			Archive: fmt.Sprintf("%s/releases/download/v%s/%s", strings.TrimSuffix(repository, "/"), version, a.Name),
			SHA256:  a.SHA256,
			Cmd:     "./" + binaryName(a.Target),
		}
	}
	e := agentEntry{
		ID: AgentID, Name: "acp-agent", Version: version,
		Description:  "A fast, sandboxed coding agent in one native binary: OpenAI and Anthropic models, MCP, sessions that survive crashes.",
		Repository:   strings.TrimSuffix(repository, "/"),
		Authors:      []string{"The acp-agent authors"},
		Distribution: map[string]interface{}{"binary": bin},
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
