// Command release builds acp-agent's release files into a directory:
// archives for the six targets, SHA256SUMS, agent.json and icon.svg
// (internal/release; docs/releasing.md). It is what `make release
// VERSION=x.y.z` and the release workflow run.
//
//	go run ./cmd/release -version 0.2.0 -out dist
//
// The commit is the checkout's HEAD; the date is SOURCE_DATE_EPOCH if set,
// else HEAD's commit time, so the same commit gives the same files.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/internal/release"
)

func main() {
	version := flag.String("version", "", "the release's version, x.y.z (required)")
	out := flag.String("out", "dist", "directory to write the release files to")
	repo := flag.String("repository", "https://github.com/acp-agent/acp-agent", "GitHub repository whose releases hold the archives")
	flag.Parse()
	if err := run(*version, *out, *repo); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(version, out, repo string) error {
	version = strings.TrimPrefix(version, "v")
	commit, err := git("rev-parse", "HEAD")
	if err != nil {
		return err
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if epoch, err = git("log", "-1", "--format=%ct"); err != nil {
			return err
		}
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return fmt.Errorf("date %q: %w", epoch, err)
	}
	src, err := os.Getwd()
	if err != nil {
		return err
	}
	cfg := release.Config{Version: version, Commit: commit, Date: time.Unix(secs, 0).UTC(), Repository: repo, Source: src, Out: out}
	archives, err := release.Build(context.Background(), cfg)
	if err != nil {
		return err
	}
	agentJSON, err := os.ReadFile(filepath.Join(out, release.AgentJSONName))
	if err != nil {
		return err
	}
	if err := release.Validate(agentJSON, release.Icon, release.AgentID); err != nil {
		return fmt.Errorf("agent.json breaks the registry's rules:\n%w", err)
	}
	for _, a := range archives {
		fmt.Printf("%s  %s\n", a.SHA256, filepath.Join(out, a.Name))
	}
	fmt.Printf("%s, %s, %s in %s (version %s, commit %.12s, %s)\n", release.SumsName, release.AgentJSONName, release.IconName,
		out, version, commit, cfg.Date.Format(time.RFC3339))
	return nil
}

func git(args ...string) (string, error) {
	b, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}
