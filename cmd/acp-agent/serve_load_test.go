package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp/acphttp"
)

// loadResult is what one load run measured.
type loadResult struct {
	// chunks are the model's chunks the client got, counted by their
	// "tN " texts: the agent merges the chunks that wait for a slow
	// connection, so a notification may carry several.
	chunks  int
	elapsed time.Duration
	cpu     time.Duration // the agent process's user+system time during the run
	// cpuExact is the same from the threads' scheduler statistics, in
	// nanoseconds rather than clock ticks.
	cpuExact time.Duration
	ttfu     []time.Duration
	// first are the times to first update of each session's first
	// prompt, the one that saves the session (creates its file).
	first []time.Duration
	rssKB int64 // the agent's peak resident memory (VmHWM)
	// order is false if some session got its chunks out of order or
	// incomplete, or a prompt did not end with end_turn.
	order bool
}

func (r loadResult) percentile(p float64) time.Duration { return percentile(r.ttfu, p) }

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// loadScript is one turn streaming chunks numbered chunks: "t0 " … ;
// paced, 10 chunks every 20 ms (a fast model: 500 chunks/s), else as fast
// as the agent takes them.
func loadScript(t testing.TB, chunks int, paced bool) string {
	path := filepath.Join(t.TempDir(), "load.json")
	events := make([]map[string]any, chunks)
	for i := range events {
		events[i] = map[string]any{"text": "t" + strconv.Itoa(i) + " "}
		if paced && i%10 == 0 {
			events[i]["delayMs"] = 20
		}
	}
	data, _ := json.Marshal(map[string]any{"turns": []any{map[string]any{"events": events}}})
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

func wantLoadText(chunks int) string {
	var b strings.Builder
	for i := range chunks {
		b.WriteString("t" + strconv.Itoa(i) + " ")
	}
	return b.String()
}

// procCPU is a process's user+system time from /proc (Linux).
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces).
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// threadsCPU is a process's time on a CPU, summed over its threads'
// scheduler statistics (Linux; nanoseconds, where /proc/PID/stat counts
// clock ticks). A thread that exited is not counted: the Go runtime
// keeps its threads.
func threadsCPU(pid int) time.Duration {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var sum time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

func procHWM(pid int) int64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// serveLoad runs conns connections of acp-agent serve at once, each with
// one session that runs prompts prompts of chunks chunks, over HTTP
// (Streamable HTTP, HTTP/1.1) or WebSocket.
func serveLoad(t testing.TB, transport string, conns, prompts, chunks int, paced bool, stagger time.Duration) loadResult {
	root := t.TempDir()
	tokenPath := filepath.Join(t.TempDir(), "token")
	cmd := exec.Command(agentBin, "serve", "--listen", "127.0.0.1:0", "--root", root, "--model", "replay/"+loadScript(t, chunks, paced),
		"--session-dir", t.TempDir(), "--token-file", tokenPath, "--log-level", "warn",
		"--max-connections", strconv.Itoa(conns+16), "--sandbox", "off")
	cmd.Env = agentEnv(t)
	var stderr io.Reader
	cmd = startCmd(t, cmd, func(cmd *exec.Cmd) (err error) {
		stderr, err = cmd.StderrPipe()
		return err
	})
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "listening on "); ok {
			url = strings.Fields(u)[0]
			break
		}
	}
	require.NotEmpty(t, url)
	go io.Copy(io.Discard, stderr)
	tokenData, err := os.ReadFile(tokenPath)
	require.NoError(t, err)
	token := strings.TrimSpace(string(tokenData))
	tr := &http.Transport{MaxIdleConnsPerHost: 4 * conns, MaxConnsPerHost: 0}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}

	type conn struct {
		c   *acphttp.Client
		sid string
		mu  sync.Mutex
		// firstAt is when the prompt's first chunk was decoded.
		firstAt time.Time
		text    strings.Builder
		n       int
	}
	cs := make([]*conn, conns)
	var dialWG sync.WaitGroup
	for i := range cs {
		cn := &conn{}
		cs[i] = cn
		dialWG.Go(func() {
			opts := acphttp.ClientOptions{URL: url, Token: token, WebSocket: transport == "ws", HTTPClient: hc,
				OnNotification: func(_ string, params json.RawMessage) {
					if !bytes.Contains(params, []byte(`"agent_message_chunk"`)) {
						return
					}
					cn.mu.Lock()
					if cn.firstAt.IsZero() {
						cn.firstAt = time.Now()
					}
					// The text, cheaply: the chunk's text is "tN ", or
					// several of them when the agent merged chunks that
					// waited for the connection.
					if i := bytes.Index(params, []byte(`"text":"`)); i >= 0 {
						rest := params[i+8:]
						text := rest[:bytes.IndexByte(rest, '"')]
						cn.n += bytes.Count(text, []byte(" "))
						cn.text.Write(text)
					}
					cn.mu.Unlock()
				}}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, _, err := acphttp.Dial(ctx, opts, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
			if err != nil {
				t.Error(err)
				return
			}
			cn.c = c
			var created struct {
				SessionID string `json:"sessionId"`
			}
			if err := c.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}}, &created); err != nil {
				t.Error(err)
			}
			cn.sid = created.SessionID
		})
	}
	dialWG.Wait()
	if t.Failed() {
		t.FailNow()
	}
	defer func() {
		for _, cn := range cs {
			cn.c.Close()
		}
	}()
	runs := make([]promptRun, len(cs))
	for i, cn := range cs {
		runs[i] = func() func() (bool, int, string, time.Time) {
			cn.mu.Lock()
			cn.n, cn.firstAt = 0, time.Time{}
			cn.text.Reset()
			cn.mu.Unlock()
			done := make(chan bool, 1)
			go func() {
				var r struct {
					StopReason string `json:"stopReason"`
				}
				err := cn.c.Call(context.Background(), "session/prompt", map[string]any{"sessionId": cn.sid,
					"prompt": []any{map[string]any{"type": "text", "text": "go"}}}, &r)
				done <- err == nil && r.StopReason == "end_turn"
			}()
			return func() (bool, int, string, time.Time) {
				ok := <-done
				cn.mu.Lock()
				defer cn.mu.Unlock()
				return ok, cn.n, cn.text.String(), cn.firstAt
			}
		}
	}
	return measure(runs, prompts, wantLoadText(chunks), cmd.Process.Pid, stagger)
}

// promptRun starts one prompt of one session; wait returns whether it
// ended well, its chunks and text, and when the client decoded its first
// chunk (zero if none came). The time is taken where the client decodes
// the notification, not by another goroutine told of it, which would add
// its own wait for a CPU to the figure.
type promptRun func() (wait func() (ok bool, chunks int, text string, first time.Time))

// measure runs prompts prompts on every session at once (with stagger,
// session i sends its first prompt i*stagger after the first) and
// measures the agent process pid.
func measure(runs []promptRun, prompts int, want string, pid int, stagger time.Duration) loadResult {
	res := loadResult{order: true}
	var mu sync.Mutex
	cpu0, exact0 := procCPU(pid), threadsCPU(pid)
	start := time.Now()
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Go(func() {
			if stagger > 0 {
				time.Sleep(time.Until(start.Add(time.Duration(i) * stagger)))
			}
			for k := range prompts {
				sent := time.Now()
				wait := run()
				ok, got, text, firstAt := wait()
				mu.Lock()
				res.chunks += got
				if !firstAt.IsZero() {
					ttfu := firstAt.Sub(sent)
					res.ttfu = append(res.ttfu, ttfu)
					if k == 0 {
						res.first = append(res.first, ttfu)
					}
				}
				res.order = res.order && ok && text == want
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.cpu, res.cpuExact = procCPU(pid)-cpu0, threadsCPU(pid)-exact0
	res.rssKB = procHWM(pid)
	return res
}

// stdioLoad is the same work over stdio: one agent process, conns
// sessions on its stdin/stdout at once, each running prompts prompts.
func stdioLoad(t testing.TB, conns, prompts, chunks int, paced bool, stagger time.Duration) loadResult {
	cmd := exec.Command(agentBin, "--model", "replay/"+loadScript(t, chunks, paced), "--session-dir", t.TempDir(), "--log-level", "warn", "--sandbox", "off")
	cmd.Env = agentEnv(t)
	cmd, stdin, stdout := startPiped(t, cmd, nil)
	defer func() { stdin.Close(); cmd.Wait() }()
	root := t.TempDir()
	type sess struct {
		firstAt time.Time
		n       int
		text    strings.Builder
	}
	var mu sync.Mutex
	bySID := map[string]*sess{}
	byID := map[string]chan []byte{}
	var wmu sync.Mutex
	send := func(s string) {
		wmu.Lock()
		defer wmu.Unlock()
		io.WriteString(stdin, s+"\n")
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			if bytes.Contains(line, []byte(`"agent_message_chunk"`)) {
				i := bytes.Index(line, []byte(`"sessionId":"`))
				rest := line[i+13:]
				sid := string(rest[:bytes.IndexByte(rest, '"')])
				mu.Lock()
				s := bySID[sid]
				if s.firstAt.IsZero() {
					s.firstAt = time.Now()
				}
				j := bytes.Index(line, []byte(`"text":"`))
				rest = line[j+8:]
				text := rest[:bytes.IndexByte(rest, '"')]
				s.n += bytes.Count(text, []byte(" ")) // its "tN " chunks
				s.text.Write(text)
				mu.Unlock()
				continue
			}
			if bytes.Contains(line, []byte(`"result"`)) || bytes.Contains(line, []byte(`"error"`)) {
				i := bytes.Index(line, []byte(`"id":`))
				rest := line[i+5:]
				end := bytes.IndexAny(rest, ",}")
				mu.Lock()
				ch := byID[string(rest[:end])]
				delete(byID, string(rest[:end]))
				mu.Unlock()
				if ch != nil {
					ch <- bytes.Clone(line)
				}
			}
		}
	}()
	var idMu sync.Mutex
	nextID := 0
	call := func(method, params string) []byte {
		idMu.Lock()
		nextID++
		id := strconv.Itoa(nextID)
		idMu.Unlock()
		ch := make(chan []byte, 1)
		mu.Lock()
		byID[id] = ch
		mu.Unlock()
		send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
		select {
		case line := <-ch:
			return line
		case <-time.After(5 * time.Minute):
			t.Errorf("no answer to %s", method)
			return nil
		}
	}
	call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	sids := make([]string, conns)
	for i := range sids {
		var resp struct {
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		json.Unmarshal(call("session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, root)), &resp)
		sids[i] = resp.Result.SessionID
		mu.Lock()
		bySID[sids[i]] = &sess{}
		mu.Unlock()
	}
	runs := make([]promptRun, len(sids))
	for i, sid := range sids {
		runs[i] = func() func() (bool, int, string, time.Time) {
			mu.Lock()
			s := bySID[sid]
			s.n, s.firstAt = 0, time.Time{}
			s.text.Reset()
			mu.Unlock()
			done := make(chan []byte, 1)
			go func() {
				done <- call("session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}`, sid))
			}()
			return func() (bool, int, string, time.Time) {
				line := <-done
				mu.Lock()
				defer mu.Unlock()
				return bytes.Contains(line, []byte(`"stopReason":"end_turn"`)), s.n, s.text.String(), s.firstAt
			}
		}
	}
	return measure(runs, prompts, wantLoadText(chunks), cmd.Process.Pid, stagger)
}

// TestServeConcurrentConnections is the small version of the load
// benchmark: many connections at once over each transport (and the same
// sessions over stdio), every session gets all of its chunks in order.
func TestServeConcurrentConnections(t *testing.T) {
	for _, tr := range []string{"http", "ws", "stdio"} {
		t.Run(tr, func(t *testing.T) {
			var r loadResult
			if tr == "stdio" {
				r = stdioLoad(t, 12, 2, 200, false, 0)
			} else {
				r = serveLoad(t, tr, 12, 2, 200, false, 0)
			}
			assert.True(t, r.order, "every session got its chunks in order and its prompts ended")
			assert.Equal(t, 12*2*200, r.chunks)
		})
	}
}

// BenchmarkServeLoad is issue 30's load benchmark: 200 connections at
// once, each running prompts that stream 1,000 chunks from the replay
// model, over Streamable HTTP and WebSocket, and the same work over stdio
// (one process, 200 sessions at once), in the same run. "saturated"
// streams as fast as the agent goes (throughput); "paced" streams 500
// chunks/s per session, 100,000/s in all (latency under load), the 200
// first prompts sent at the same instant; "paced-staggered" is paced
// with the sessions' first prompts sent 1 ms apart (200 users in 200
// ms), reported beside it. It reports chunks/s, chunks per CPU-second of
// the agent process (throughput per core), p50/p99 time to the first
// update, the p99 of the sessions' first prompts alone (they save the
// session: its file is made durable before the answer is shown) and the
// agent's peak RSS.
func BenchmarkServeLoad(b *testing.B) {
	const conns, chunks = 200, 1000
	for _, mode := range []string{"saturated", "paced", "paced-staggered"} {
		for _, tr := range []string{"stdio", "http", "ws"} {
			b.Run(mode+"/"+tr, func(b *testing.B) { benchLoad(b, mode, tr, conns, chunks) })
		}
	}
}

func benchLoad(b *testing.B, mode, tr string, conns, chunks int) {
	paced := mode != "saturated"
	prompts := 5
	if paced {
		prompts = 3
	}
	var stagger time.Duration
	if mode == "paced-staggered" {
		stagger = time.Millisecond
	}
	var r loadResult
	for b.Loop() {
		if tr == "stdio" {
			r = stdioLoad(b, conns, prompts, chunks, paced, stagger)
		} else {
			r = serveLoad(b, tr, conns, prompts, chunks, paced, stagger)
		}
	}
	if !r.order {
		b.Fatal("a session lost or reordered chunks")
	}
	b.ReportMetric(float64(r.chunks)/r.elapsed.Seconds(), "chunks/s")
	b.ReportMetric(float64(r.chunks)/r.cpu.Seconds(), "chunks/cpu-s")
	b.ReportMetric(float64(r.percentile(0.5).Microseconds())/1000, "ttfu-p50-ms")
	b.ReportMetric(float64(r.percentile(0.99).Microseconds())/1000, "ttfu-p99-ms")
	if paced {
		b.ReportMetric(float64(percentile(r.first, 0.99).Microseconds())/1000, "ttfu-first-p99-ms")
	}
	b.ReportMetric(float64(r.rssKB)/1024, "MB-RSS")
}

// BenchmarkFirstPromptCPU is the agent's CPU per first prompt in
// BenchmarkServeLoad/paced's burst: 200 sessions (stdio, or one per
// connection over HTTP and WebSocket) whose first prompts arrive at one
// instant, each answered with one chunk after the script's 20 ms. The
// agent's user+system time from the prompts' sending to their last
// answer, divided by the prompts: what each first prompt costs the
// burst's two cores (session save, system prompt, decoding, the
// collector), measured as CPU rather than latency, so it is steadier
// than ttfu-first-p99-ms on a shared machine. Also reports the agent's
// peak RSS.
func BenchmarkFirstPromptCPU(b *testing.B) {
	const conns = 200
	for _, tr := range []string{"stdio", "http", "ws"} {
		b.Run(tr, func(b *testing.B) {
			var cpu time.Duration
			var rss int64
			n := 0
			for b.Loop() {
				var r loadResult
				if tr == "stdio" {
					r = stdioLoad(b, conns, 1, 1, true, 0)
				} else {
					r = serveLoad(b, tr, conns, 1, 1, true, 0)
				}
				if !r.order {
					b.Fatal("a session lost its chunk or its prompt failed")
				}
				cpu += r.cpuExact
				rss = max(rss, r.rssKB)
				n += conns
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/first-prompt")
			b.ReportMetric(float64(rss)/1024, "MB-RSS")
		})
	}
}
