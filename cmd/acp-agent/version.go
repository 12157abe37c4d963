package main

import (
	"fmt"
	"io"
	"regexp"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// Stamped at build time by make build and releases (-ldflags -X
// main.commit=... -X main.date=...; internal/release.LDFlags).
var (
	commit = "unknown"
	date   = "unknown"
)

// stamps are the version, commit and date --version and initialize's
// agentInfo give. A binary built without the link-time stamps (go
// install ./cmd/acp-agent, go build, go install ...@v0.2.0, as the README
// offers) says what the Go toolchain recorded instead: the module's
// version, and the commit and its time where the build ran in a git
// checkout. Read once, when first asked, not at every start.
var stamps = sync.OnceValue(func() [3]string {
	v, c, d := version, commit, date
	if bi, ok := debug.ReadBuildInfo(); ok {
		v, c, d = fromBuildInfo(bi, v, c, d)
	}
	return [3]string{v, c, d}
})

// agentVersion is the version agentInfo gives.
func agentVersion() string { return stamps()[0] }

// fromBuildInfo fills in what the link-time stamps left at their
// defaults from bi.
func fromBuildInfo(bi *debug.BuildInfo, v, c, d string) (string, string, string) {
	// A release's tag (go install ...@v0.2.0), not the pseudo-version
	// Go makes up for a checkout (v0.0.0-20261127103151-e4268c7f1475+dirty),
	// which the commit says better.
	if mv := bi.Main.Version; v == "0.1.0-dev" && mv != "" && mv != "(devel)" && !pseudoVersion.MatchString(mv) {
		v = strings.TrimPrefix(mv, "v")
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if c == "unknown" && settings["vcs.revision"] != "" {
		c = settings["vcs.revision"]
		if settings["vcs.modified"] == "true" {
			c += " with local changes"
		}
	}
	if d == "unknown" && settings["vcs.time"] != "" {
		d = settings["vcs.time"]
	}
	return v, c, d
}

// pseudoVersion matches Go's pseudo-versions (a commit's time and hash)
// and local builds' "+dirty".
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}|\+dirty$`)

// versionLine is what --version prints first: version, commit, build
// date and platform.
func versionLine() string {
	st := stamps()
	return fmt.Sprintf("acp-agent %s (commit %s, built %s, %s/%s)", st[0], st[1], st[2], goruntime.GOOS, goruntime.GOARCH)
}

// printVersion is --version, the same for acp-agent and each subcommand
// that takes it: the version line, then what confines commands here.
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s\nsandbox: %s\n", versionLine(), sandbox.Probe())
	return err
}
