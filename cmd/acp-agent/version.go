package main

import (
	"fmt"
	"io"
	goruntime "runtime"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
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

// printVersion is --version, the same for acp-agent and each subcommand
// that takes it: the version line, then what confines commands here.
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s\nsandbox: %s\n", versionLine(), sandbox.Probe())
	return err
}
