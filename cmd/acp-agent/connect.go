package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/coder/websocket"

	"github.com/acp-agent/acp-agent/acp"
)

// runConnect is acp-agent connect URL: a stdio agent for editors (and
// acpx) that only start agents as subprocesses, which forwards every
// message to a remote `acp-agent serve` over its WebSocket and back, one
// JSON-RPC message per line on stdin/stdout.
func runConnect(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("acp-agent connect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tokenFile := fs.String("token-file", os.Getenv("ACP_AGENT_TOKEN_FILE"), "file holding the server's bearer token (env ACP_AGENT_TOKEN_FILE; or the token itself in ACP_AGENT_TOKEN)")
	maxLine := fs.Int("max-message-bytes", acp.DefaultMaxMessageBytes, "longest message accepted from either side")
	fs.Usage = func() {
		fmt.Fprint(stdout, "Usage: acp-agent connect [flags] https://HOST/acp\n\nSpeaks ACP on stdin/stdout and forwards it to a remote acp-agent serve over WebSocket\n(docs/remote.md): an editor starts it like a local agent.\n\nFlags:\n")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("give the server's URL, e.g. acp-agent connect https://dev.example/acp")
	}
	token := os.Getenv("ACP_AGENT_TOKEN")
	if *tokenFile != "" {
		data, err := os.ReadFile(*tokenFile)
		if err != nil {
			return err
		}
		token = strings.TrimSpace(string(data))
	}
	if token == "" {
		return errors.New("no token: give --token-file (or ACP_AGENT_TOKEN)")
	}
	u := fs.Arg(0)
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	}
	ws, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			return fmt.Errorf("connecting to %s: %s: %s", fs.Arg(0), resp.Status, bytes.TrimSpace(body))
		}
		return fmt.Errorf("connecting to %s: %w", fs.Arg(0), err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(int64(*maxLine))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The server's messages, to stdout, one per line.
	done := make(chan error, 1)
	go func() {
		defer cancel()
		w := bufio.NewWriter(stdout)
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				done <- err
				return
			}
			w.Write(bytes.TrimSpace(data))
			w.WriteByte('\n')
			if err := w.Flush(); err != nil {
				done <- err
				return
			}
		}
	}()
	// stdin, one message per line, to the server.
	lines := acp.NewLineStream(stdin, io.Discard, *maxLine)
	for {
		m, err := lines.Read(ctx)
		if errors.Is(err, acp.ErrInvalidRequest) {
			fmt.Fprintln(stderr, "acp-agent connect: skipped a line:", err)
			continue
		}
		if err != nil {
			break
		}
		if err := ws.Write(ctx, websocket.MessageText, m.Data); err != nil {
			break
		}
	}
	ws.Close(websocket.StatusNormalClosure, "")
	cancel()
	if err := <-done; websocket.CloseStatus(err) == websocket.StatusNormalClosure || websocket.CloseStatus(err) == websocket.StatusGoingAway || ctx.Err() != nil {
		return nil
	} else if err != nil {
		return fmt.Errorf("the server closed the connection: %w", err)
	}
	return nil
}
