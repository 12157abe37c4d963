package main

import (
	"fmt"
	"io"
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
	if v != "0.1.0-dev" && c != "unknown" && d != "unknown" {
		return [3]string{v, c, d} // a release: nothing to fill in
	}
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
	if mv := bi.Main.Version; v == "0.1.0-dev" && mv != "" && mv != "(devel)" && !pseudoVersion(mv) {
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

// pseudoVersion reports whether v is one of Go's pseudo-versions (a
// commit's time and hash: v0.0.0-20261127103151-e4268c7f1475) or a local
// build's "+dirty" one. Not a regexp: this package's init would compile it
// at every start.
func pseudoVersion(v string) bool {
	if strings.HasSuffix(v, "+dirty") {
		return true
	}
	for i := 14; i+13 <= len(v); i++ {
		if v[i] == '-' && allIn(v[i-14:i], "0123456789") && allIn(v[i+1:i+13], "0123456789abcdef") {
			return true
		}
	}
	return false
}

// allIn reports whether every byte of s is one of set.
func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

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
