package main

import (
	"fmt"
	goruntime "runtime"
)

// Stamped at build time by make build and releases (-ldflags -X
// main.commit=... -X main.date=...; internal/release.LDFlags).
var (
	commit = "unknown"
	date   = "unknown"
)

// versionLine is what --version prints first: version, commit, build
// date and platform.
func versionLine() string {
	return fmt.Sprintf("acp-agent %s (commit %s, built %s, %s/%s)", version, commit, date, goruntime.GOOS, goruntime.GOARCH)
}
