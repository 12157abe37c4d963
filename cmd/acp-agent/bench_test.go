package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-agent/acp-agent/acp"
)

const initializeLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"

// BenchmarkStartupToInitialize measures process start to the initialize
// response over real pipes, and the memory the process holds right after
// it, for this binary and, alternately in the same loop, for the example
// agent of github.com/coder/acp-go-sdk (the floor: an ACP agent that does
// nothing else), built here. It reports the medians (ms), their ratio, and
// the largest peak RSS (VmHWM, MB) of each. A third program, started in
// the same loop, answers initialize linking only jsonschema/v5
// (testdata/startfloor): what that dependency's package init alone costs
// (js5-floor-ms-median); acp-agent links it no more (tests only), so the
// figure shows what the removal saved.
// Both are built as releases are (static, CGO_ENABLED=0, -trimpath,
// -ldflags "-s -w": internal/release, the Dockerfile): a binary linked
// against libc pays for the dynamic loader at every start.
// ACP_AGENT_BENCH_BIN names another build of acp-agent to measure instead
// (main's, for a before/after comparison).
func BenchmarkStartupToInitialize(b *testing.B) {
	dir := b.TempDir()
	releaseBuild := func(out, pkg string) string {
		build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := build.CombinedOutput(); err != nil {
			b.Fatalf("building %s: %v\n%s", pkg, err, msg)
		}
		return out
	}
	floor := releaseBuild(filepath.Join(dir, "coder-example-agent"), "github.com/coder/acp-go-sdk/example/agent")
	js5 := releaseBuild(filepath.Join(dir, "startfloor"), "./testdata/startfloor")
	bin := os.Getenv("ACP_AGENT_BENCH_BIN")
	if bin == "" {
		bin = releaseBuild(filepath.Join(dir, "acp-agent"), ".")
	}
	// Sessions go to a fresh directory: no user's stale files to sweep.
	env := append(os.Environ(), "XDG_STATE_HOME="+b.TempDir())
	var ours, theirs, withJS5 []time.Duration
	var oursRSS, theirsRSS int64
	for b.Loop() {
		d, rss := startToInitialize(b, exec.Command(bin, "--model", "replay/default", "--log-level", "warn"), env)
		ours = append(ours, d)
		oursRSS = max(oursRSS, rss)
		d, rss = startToInitialize(b, exec.Command(floor), env)
		theirs = append(theirs, d)
		theirsRSS = max(theirsRSS, rss)
		d, _ = startToInitialize(b, exec.Command(js5), env)
		withJS5 = append(withJS5, d)
	}
	om, tm := median(ours), median(theirs)
	b.ReportMetric(float64(om.Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(tm.Microseconds())/1000, "coder-ms-median")
	b.ReportMetric(float64(median(withJS5).Microseconds())/1000, "js5-floor-ms-median")
	b.ReportMetric(float64(om)/float64(tm), "x-coder")
	b.ReportMetric(float64(oursRSS)/1024, "MB-RSS")
	b.ReportMetric(float64(theirsRSS)/1024, "coder-MB-RSS")
}

// startToInitialize starts cmd, sends initialize and returns the time to
// its response and the process's peak RSS (kB) right after it.
func startToInitialize(b *testing.B, cmd *exec.Cmd, env []string) (time.Duration, int64) {
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if _, err := io.WriteString(stdin, initializeLine); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	elapsed := time.Since(start)
	if err != nil || !bytes.Contains(line, []byte(`"protocolVersion":1`)) {
		b.Fatalf("%s: initialize: %q %v", cmd.Path, line, err)
	}
	rss := procStatusKB(cmd.Process.Pid, "VmHWM:")
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return elapsed, rss
}

// procStatusKB reads a kB field of a process's /proc status (Linux).
func procStatusKB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

const streamChunks = 100000

// BenchmarkStreamChunks measures agent_message_chunk notifications per
// second through the real binary and pipes with the replay provider: one
// op is one prompt streaming 100,000 chunks.
func BenchmarkStreamChunks(b *testing.B) {
	script := benchScript(b)
	cmd := exec.Command(agentBin, "--model", "replay/"+script, "--log-level", "warn")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	r := bufio.NewReaderSize(stdout, 1<<20)
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	send(strings.TrimSpace(initializeLine))
	readLine(b, r)
	send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	var created struct {
		Result acp.NewSessionResponse `json:"result"`
	}
	if err := json.Unmarshal(readLine(b, r), &created); err != nil {
		b.Fatal(err)
	}
	prompt := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, created.Result.SessionID)

	var total time.Duration
	chunks := 0
	for b.Loop() {
		start := time.Now()
		send(prompt)
		for {
			line := readLine(b, r)
			if bytes.Contains(line, []byte(`"agent_message_chunk"`)) {
				chunks++
				continue
			}
			if bytes.Contains(line, []byte(`"stopReason"`)) {
				break
			}
			// The slash-command announcement and the title (first
			// prompt) are not chunks.
			if bytes.Contains(line, []byte(`"available_commands_update"`)) || bytes.Contains(line, []byte(`"session_info_update"`)) {
				continue
			}
			b.Fatalf("unexpected line %s", line)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(chunks)/total.Seconds(), "chunks/s")
}

// BenchmarkStreamChunksV2 is BenchmarkStreamChunks on an ACP v2
// connection: one op is one prompt streaming 100,000 chunks, read until
// the turn's idle state_update.
func BenchmarkStreamChunksV2(b *testing.B) {
	script := benchScript(b)
	cmd := exec.Command(agentBin, "--model", "replay/"+script, "--log-level", "warn")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	r := bufio.NewReaderSize(stdout, 1<<20)
	send := func(s string) {
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"bench","version":"1"}}}`)
	readLine(b, r)
	send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp"}}`)
	var created struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if err := json.Unmarshal(readLine(b, r), &created); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	chunks, id := 0, 1
	for b.Loop() {
		id++
		start := time.Now()
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, id, created.Result.SessionID))
		for {
			line := readLine(b, r)
			if bytes.Contains(line, []byte(`"agent_message_chunk"`)) {
				chunks++
				continue
			}
			if bytes.Contains(line, []byte(`"state":"idle"`)) {
				break
			}
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(chunks)/total.Seconds(), "chunks/s")
}

// BenchmarkStreamBareMarshal is the baseline for BenchmarkStreamChunks:
// the same notifications, json.Marshal-ed in a loop and written to an OS
// pipe whose other end is read line by line, in one process: the cost of
// the bytes alone, with no protocol machinery. "per-line" makes one write
// per message (what a naive agent does), "buffered" writes through a 64 KiB
// bufio.Writer (the best a loop can do).
func BenchmarkStreamBareMarshal(b *testing.B) {
	for _, buffered := range []bool{false, true} {
		name := "per-line"
		if buffered {
			name = "buffered"
		}
		b.Run(name, func(b *testing.B) { benchBareMarshal(b, buffered) })
	}
}

func benchBareMarshal(b *testing.B, buffered bool) {
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	lines := make(chan int)
	go func() {
		r := bufio.NewReaderSize(pr, 1<<20)
		n := 0
		for {
			if _, err := r.ReadSlice('\n'); err != nil {
				lines <- n
				return
			}
			n++
		}
	}()
	type envelope struct {
		JSONRPC string                  `json:"jsonrpc"`
		Method  string                  `json:"method"`
		Params  acp.SessionNotification `json:"params"`
	}
	msg := envelope{"2.0", acp.MethodSessionUpdate, acp.SessionNotification{
		SessionID: "0f8b6d7e-4c1a-4a57-9a53-2b1e0d7c9f10",
		Update:    acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.TextBlock("chunk "), MessageID: "5d1e4f2a-8b3c-4d6e-9f70-1a2b3c4d5e6f"}},
	}}
	var w io.Writer = pw
	bw := bufio.NewWriterSize(pw, 64<<10)
	if buffered {
		w = bw
	}
	var total time.Duration
	chunks := 0
	for b.Loop() {
		start := time.Now()
		for range streamChunks {
			data, err := json.Marshal(&msg)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := w.Write(append(data, '\n')); err != nil {
				b.Fatal(err)
			}
		}
		if err := bw.Flush(); err != nil {
			b.Fatal(err)
		}
		chunks += streamChunks
		total += time.Since(start)
	}
	pw.Close()
	if got := <-lines; got != chunks {
		b.Fatalf("read %d lines, wrote %d", got, chunks)
	}
	pr.Close()
	b.ReportMetric(float64(chunks)/total.Seconds(), "chunks/s")
}

func benchScript(b *testing.B) string {
	path := b.TempDir() + "/bench.json"
	script := fmt.Sprintf(`{"turns":[{"events":[{"text":"chunk ","repeat":%d}],"finish":"stop"}]}`, streamChunks)
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

func readLine(b *testing.B, r *bufio.Reader) []byte {
	line, err := r.ReadSlice('\n')
	if err != nil {
		b.Fatalf("reading agent output: %v", err)
	}
	return line
}

// BenchmarkSessionNew measures session/new then session/close, over real
// pipes on one running agent, after the first session: what an editor
// waits for each time it opens a thread. Sessions are stored.
func BenchmarkSessionNew(b *testing.B) {
	cmd := exec.Command(agentBin, "--model", "replay/default", "--log-level", "warn", "--session-dir", b.TempDir())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + b.TempDir()}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReader(stdout)
	id := 0
	call := func(method, params string) []byte {
		id++
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		want := []byte(fmt.Sprintf(`"id":%d,`, id))
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			if bytes.Contains(line, want) && (bytes.Contains(line, []byte(`"result"`)) || bytes.Contains(line, []byte(`"error"`))) {
				return line
			}
		}
	}
	call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	cwd := b.TempDir()
	open := func() {
		line := call("session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd))
		var resp struct {
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &resp) != nil || resp.Result.SessionID == "" {
			b.Fatalf("session/new: %s", line)
		}
		call("session/close", fmt.Sprintf(`{"sessionId":%q}`, resp.Result.SessionID))
	}
	open() // the first session (and its caches) is not counted
	for b.Loop() {
		open()
	}
}
