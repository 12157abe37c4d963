package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// commandTurnScript writes a replay script whose first turn runs "true"
// (with is true) or answers at once.
func commandTurnScript(tb testing.TB, with bool) string {
	tb.Helper()
	turns := []any{map[string]any{"events": []any{map[string]any{"text": "done"}}}}
	if with {
		call := map[string]any{"toolCall": map[string]any{"id": "c1", "name": "run_command", "arguments": map[string]any{"command": "true"}}}
		turns = append([]any{map[string]any{"events": []any{call}}}, turns...)
	}
	data, err := json.Marshal(map[string]any{"turns": turns})
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), fmt.Sprintf("turn-%v.json", with))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// gitRepo makes a committed git repository in dir holding dirs × files
// small files.
func gitRepo(tb testing.TB, dir string, dirs, files int) {
	tb.Helper()
	for d := range dirs {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			tb.Fatal(err)
		}
		for f := range files {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.txt", f)), []byte(fmt.Sprintf("file %d %d\n", d, f)), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	// No automatic gc: it would go on writing in the background, into a
	// directory the benchmark removes.
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@example.com", "-c", "gc.auto=0", "-c", "maintenance.auto=false", "commit", "-qm", "tree"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// BenchmarkExecCommand50kFiles is issue 31's checkpoint figure: whole
// "acp-agent exec" turns (sessions stored, full-access mode), with and
// without a run_command of "true", in a git repository of 50,000 small
// files (500 directories × 100) and in one of a single file, alternated,
// medians of 10 each. Each repository has its own HOME, kept across the
// runs as a user's is, so a run finds what the last one kept of the
// workspace's scan. extra-ms is what the command costs in the large
// repository beyond what it costs in the small one:
// (large with − large without) − (small with − small without). The
// "-cpu-ms" figures are the agent's CPU time, its children included
// (user + system), which the machine's load moves less than the wall
// clock.
func BenchmarkExecCommand50kFiles(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	large, small := b.TempDir(), b.TempDir()
	gitRepo(b, large, 500, 100)
	gitRepo(b, small, 1, 1)
	with, without := commandTurnScript(b, true), commandTurnScript(b, false)
	homes := map[string]string{large: b.TempDir(), small: b.TempDir()}
	run := func(dir, script string) (wall, cpu time.Duration) {
		cmd := exec.Command(agentBin, "exec", "--mode", "full-access", "--model", "replay/"+script, "run it")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + homes[dir]}
		start := time.Now()
		out, err := cmd.CombinedOutput()
		wall = time.Since(start)
		if err != nil || !strings.Contains(string(out), "done") {
			b.Fatalf("exec: %v\n%s", err, out)
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	// Warm the page cache, and let each workspace keep a scan.
	for range 2 {
		run(large, with)
		run(small, with)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for b.Loop() {
		var wall, cpu [4][]time.Duration
		for range 10 {
			for i, c := range []struct{ dir, script string }{{large, with}, {large, without}, {small, with}, {small, without}} {
				w, u := run(c.dir, c.script)
				wall[i], cpu[i] = append(wall[i], w), append(cpu[i], u)
			}
		}
		var m, mc [4]time.Duration
		for i := range wall {
			m[i], mc[i] = median(wall[i]), median(cpu[i])
		}
		b.ReportMetric(ms(m[0]), "large-with-ms")
		b.ReportMetric(ms(m[1]), "large-without-ms")
		b.ReportMetric(ms(m[2]), "small-with-ms")
		b.ReportMetric(ms(m[3]), "small-without-ms")
		b.ReportMetric(ms((m[0]-m[1])-(m[2]-m[3])), "extra-ms")
		b.ReportMetric(ms((mc[0]-mc[1])-(mc[2]-mc[3])), "extra-cpu-ms")
		b.ReportMetric(ms(mc[0]), "large-with-cpu-ms")
		b.ReportMetric(ms(mc[2]), "small-with-cpu-ms")
	}
}
