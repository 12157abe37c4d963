//go:build linux

package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

func BenchmarkTerminalStartWait(b *testing.B) {
	term := NewLocalTerminal(TerminalOptions{Env: []string{"PATH=" + termTestPath}})
	defer term.Close()
	ctx := context.Background()
	spec := CommandSpec{Command: "true", Cwd: b.TempDir()}
	b.ReportAllocs()
	for b.Loop() {
		p, err := term.Start(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		if st, err := p.Wait(ctx); err != nil || *st.ExitCode != 0 {
			b.Fatalf("wait: %v %+v", err, st)
		}
		if err := p.Release(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTailBufferWrite(b *testing.B) {
	buf := newTailBuffer(DefaultOutputByteLimit)
	chunk := make([]byte, 32<<10)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		_, _ = buf.Write(chunk)
	}
}

// BenchmarkSandboxOverhead compares a command run confined (a request to
// the terminal's warm sandbox helper: Landlock, seccomp, reaping) with the same
// command unconfined, and reports each one's median time per command
// (docs/benchmarks.md; the target is under 5 ms of overhead).
func BenchmarkSandboxOverhead(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	// A workspace of 20,000 files in 2,000 directories with a .env at the
	// root and in four apps: the helper looks for secrets files before
	// each command (only the directories that changed are read again) and
	// grants around them.
	large := b.TempDir()
	for d := range 2000 {
		sub := filepath.Join(large, fmt.Sprintf("d%d/s%d", d/50, d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 10 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.go", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, env := range []string{".env", "d1/.env", "d2/s100/.env.local", "d3/.env", "d4/s200/.env"} {
		if err := os.WriteFile(filepath.Join(large, env), []byte("TOKEN=x"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	// The helper reads a directory changed in the last two seconds again
	// at every command (a change in the same clock tick would not show
	// in its times): measure the steady state, not the tree's creation.
	made := time.Now()
	// What a session has: a git root with a .env, and the default denied
	// paths of a home that holds them (.ssh, .aws, .config/gh, ...).
	repo, home := b.TempDir(), b.TempDir()
	for _, p := range []string{".git/hooks/pre-commit.sample", ".git/HEAD", ".env", "main.go", "app/.env.local", "app/app.go"} {
		if err := os.MkdirAll(filepath.Join(repo, filepath.Dir(p)), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, p), []byte("x"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	denied := sandbox.DefaultDeniedPaths(home)
	for _, p := range denied[:6] {
		if err := os.MkdirAll(p, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		sb   *Sandbox
		dir  string
	}{
		{"unconfined", nil, dir},
		{"sandboxed", &Sandbox{Exe: exe, Policy: sandbox.Policy{WritableRoots: []string{dir}, TempDir: b.TempDir()}}, dir},
		{"sandboxed-20k-files", &Sandbox{Exe: exe, Policy: sandbox.Policy{WritableRoots: []string{large}, TempDir: b.TempDir()}}, large},
		{"sandboxed-git-env-home", &Sandbox{Exe: exe, Policy: sandbox.Policy{WritableRoots: []string{repo}, TempDir: b.TempDir(), DeniedPaths: denied}}, repo},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.sb != nil && !sandbox.Probe().Available {
				b.Skip("no sandbox here:", sandbox.Probe().Reason)
			}
			if bc.dir == large {
				time.Sleep(time.Until(made.Add(2100 * time.Millisecond)))
			}
			term := NewLocalTerminal(TerminalOptions{Env: []string{"PATH=" + termTestPath}, Sandbox: bc.sb})
			defer term.Close()
			term.Warm() // as a session does before its first command
			ctx := context.Background()
			spec := CommandSpec{Command: "true", Cwd: bc.dir}
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				p, err := term.Start(ctx, spec)
				if err != nil {
					b.Fatal(err)
				}
				if st, err := p.Wait(ctx); err != nil || *st.ExitCode != 0 {
					b.Fatalf("wait: %v %+v", err, st)
				}
				times = append(times, time.Since(start))
				if err := p.Release(); err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
		})
	}
}

// BenchmarkSandboxFirstCommand is what a session's first confined command
// costs: a new terminal, whose helper (this test binary in helper mode)
// is the process's spare, started by Warm right after the terminal was
// made (a session warms it when the model names a run_command call, or
// 200 ms after its workspace opened). "after-model" runs the command
// 50 ms after the warm-up started, as a session's first command comes
// after the model's first answer at the earliest; "at-once" runs it right
// away, so it waits for what is left of the helper's start-up. Each
// reports the median time and the helper's resident memory, read by the
// command from /proc/$PPID/status.
func BenchmarkSandboxFirstCommand(b *testing.B) {
	if st := sandbox.Probe(); !st.Available {
		b.Skip("no sandbox here:", st.Reason)
	}
	for _, bc := range []struct {
		name  string
		think time.Duration
	}{{"at-once", 0}, {"after-model", 50 * time.Millisecond}} {
		b.Run(bc.name, func(b *testing.B) { benchFirstCommand(b, bc.think) })
	}
}

func benchFirstCommand(b *testing.B, think time.Duration) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	ctx := context.Background()
	spec := CommandSpec{Command: "sh", Args: []string{"-c", "grep VmRSS /proc/$PPID/status"}, Cwd: dir}
	var times []time.Duration
	var rssKB int
	for b.Loop() {
		term := NewLocalTerminal(TerminalOptions{Env: []string{"PATH=" + termTestPath},
			Sandbox: &Sandbox{Exe: exe, Policy: sandbox.Policy{WritableRoots: []string{dir}, TempDir: b.TempDir()}}})
		term.Warm()
		time.Sleep(think)
		start := time.Now()
		p, err := term.Start(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		if st, err := p.Wait(ctx); err != nil || *st.ExitCode != 0 {
			b.Fatalf("wait: %v %+v", err, st)
		}
		times = append(times, time.Since(start))
		out, _, _ := p.Output()
		if f := strings.Fields(out); len(f) >= 2 {
			if n, err := strconv.Atoi(f[1]); err == nil {
				rssKB = max(rssKB, n)
			}
		}
		_ = p.Release()
		_ = term.Close()
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(rssKB)/1024, "helper-MB-RSS")
}
