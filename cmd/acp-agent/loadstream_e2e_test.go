package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/persistence"
)

// writeLongSession stores a session of n alternating user and assistant
// entries (about 500 bytes each) in dir and returns its id.
func writeLongSession(t *testing.T, dir, cwd string, n int) string {
	t.Helper()
	store, err := persistence.OpenStore(dir)
	require.NoError(t, err)
	id := "long-session"
	f, err := store.Create(persistence.Header{ID: id, CWD: cwd, Title: "long"})
	require.NoError(t, err)
	text := strings.Repeat("lorem ipsum dolor sit amet ", 16)
	recs := make([]json.RawMessage, 0, n)
	for i := range n {
		kind := "user"
		if i%2 == 1 {
			kind = "assistant"
		}
		rec, err := json.Marshal(map[string]any{"type": "entry", "time": time.Unix(int64(i), 0).UTC(), "kind": kind,
			"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("%d %s", i, text)}}})
		require.NoError(t, err)
		recs = append(recs, rec)
	}
	require.NoError(t, f.Append(recs...))
	require.NoError(t, f.Close())
	require.NoError(t, store.Close())
	return id
}

var fileReadLog = regexp.MustCompile(`msg="session file read" session=long-session records=(\d+) replayed=(\d+)`)

// TestBinaryReplaysALoadWhileItReadsTheFile: session/load (v1) and
// session/resume with replayFrom (v2) send the first replayed update
// before the agent has read the whole session file. The agent logs (at
// debug) when it has read the file; the client reads the first update
// and then nothing more, so an agent that streams the replay blocks on
// the client (6,000 updates are more than its outbox and the pipe hold)
// before it can have read the file and logged it; one that replayed only
// after reading would have logged it before writing any update. No
// timing is involved: what the stderr pipe holds when the first update
// has been read is decided by the agent's order of writes.
func TestBinaryReplaysALoadWhileItReadsTheFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("reads a pipe with a deadline")
	}
	t.Parallel()
	for _, tc := range []struct {
		name, init, open string
		first            string // the kind of the first update
	}{
		{"v1 session/load", `{"protocolVersion":1}`, `"method":"session/load","params":{"sessionId":"long-session","cwd":%q,"mcpServers":[]}`, `"sessionUpdate":"user_message_chunk"`},
		{"v2 session/resume", `{"protocolVersion":2,"info":{"name":"test","version":"1"}}`, `"method":"session/resume","params":{"sessionId":"long-session","cwd":%q,"replayFrom":{"type":"start"}}`, `"sessionUpdate":"user_message"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const n = 6000
			dir, cwd := t.TempDir(), t.TempDir()
			writeLongSession(t, dir, cwd, n)
			inR, inW, err := os.Pipe()
			require.NoError(t, err)
			outR, outW, err := os.Pipe()
			require.NoError(t, err)
			errR, errW, err := os.Pipe()
			require.NoError(t, err)
			cmd := exec.Command(agentBin, "--session-dir", dir, "--model", "replay/default", "--log-level", "debug")
			cmd.Env = agentEnv(t)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
			require.NoError(t, cmd.Start())
			inR.Close()
			outW.Close()
			errW.Close()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var stderr bytes.Buffer
			// drain reads what the agent has written to stderr so far: a
			// write that returned is in the pipe, so it is read.
			drain := func() {
				buf := make([]byte, 64<<10)
				for {
					require.NoError(t, errR.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
					k, err := errR.Read(buf)
					stderr.Write(buf[:k])
					if err != nil {
						return
					}
				}
			}
			t.Cleanup(func() {
				inW.Close()
				go io.Copy(io.Discard, outR)
				go io.Copy(io.Discard, errR)
				select {
				case err := <-exited:
					require.NoError(t, err)
				case <-time.After(waitBudget(t)):
					cmd.Process.Kill()
					<-exited
					t.Error("the agent did not exit")
				}
				outR.Close()
				errR.Close()
				if t.Failed() {
					t.Logf("agent stderr:\n%s", stderr.String())
				}
			})
			out := bufio.NewReader(outR)
			require.NoError(t, outR.SetReadDeadline(time.Now().Add(waitBudget(t))))
			send := func(s string) {
				_, err := io.WriteString(inW, s+"\n")
				require.NoError(t, err)
			}
			// line reads the next message the agent wrote.
			line := func() string {
				l, err := out.ReadString('\n')
				require.NoError(t, err)
				return l
			}
			send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + tc.init + `}`)
			for !strings.HasPrefix(line(), `{"id":1,`) {
			}
			send(`{"jsonrpc":"2.0","id":2,` + fmt.Sprintf(tc.open, cwd) + `}`)
			first := line()
			require.Contains(t, first, `"method":"session/update"`)
			require.Contains(t, first, tc.first, "the first update is the conversation's first message")
			drain()
			require.NotRegexp(t, fileReadLog, stderr.String(), "the file was read before the first replayed update was sent")

			updates := 1
			for {
				l := line()
				if strings.HasPrefix(l, `{"id":2,`) {
					require.NotContains(t, l, `"error"`)
					break
				}
				if strings.Contains(l, `"sessionUpdate":"user_message`) || strings.Contains(l, `"sessionUpdate":"agent_message`) {
					updates++
				}
			}
			require.Equal(t, n, updates, "the whole conversation")
			deadline := time.Now().Add(waitBudget(t))
			for !fileReadLog.MatchString(stderr.String()) && time.Now().Before(deadline) {
				drain()
			}
			m := fileReadLog.FindStringSubmatch(stderr.String())
			require.NotNil(t, m, "the agent logs when it has read the file")
			require.Equal(t, strconv.Itoa(n), m[1])
			replayed, _ := strconv.Atoi(m[2])
			require.Greater(t, replayed, 1024, "updates replayed while the file was read")
		})
	}
}
