package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"

	"github.com/coder/websocket"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/runtime"
)

// runConnect is acp-agent connect URL: a stdio agent for editors (and
// acpx) that only start agents as subprocesses, which forwards every
// message to a remote `acp-agent serve` over its WebSocket and back, one
// JSON-RPC message per line on stdin/stdout.
func runConnect(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("acp-agent connect", flag.ContinueOnError)
	tokenFile := fs.String("token-file", os.Getenv("ACP_AGENT_TOKEN_FILE"), "file holding the server's bearer token (env ACP_AGENT_TOKEN_FILE; or the token itself in ACP_AGENT_TOKEN)")
	maxLine := fs.Int("max-message-bytes", acp.DefaultMaxMessageBytes, "longest message accepted from either side")
	insecure := fs.Bool("insecure", false, "send the token over plain http:// (ws://) to a host that is not loopback (a private network only)")
	if err := parseFlags(fs, "acp-agent connect", args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("give the server's URL, e.g. acp-agent connect https://dev.example/acp")
	}
	token := os.Getenv("ACP_AGENT_TOKEN")
	if *tokenFile != "" {
		// Private, as serve's own (readToken): the token drives the agent.
		t, err := readToken(*tokenFile)
		if err != nil {
			return err
		}
		token = t
	}
	if token == "" {
		return errors.New("no token: give --token-file (or ACP_AGENT_TOKEN)")
	}
	u, err := connectURL(fs.Arg(0), *insecure)
	if err != nil {
		return err
	}
	// No redirect is followed: Go's client keeps the Authorization header
	// on a redirect to the same host name, https to plain http included.
	noRedirects := &http.Client{CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		return fmt.Errorf("the server redirected to %s: connect follows no redirects (the token would go along); give that URL if it is the server's", req.URL.Redacted())
	}}
	ws, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: noRedirects,
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			hint := ""
			if resp.StatusCode == http.StatusUnauthorized {
				hint = "; the token is not the server's: copy it again from the server's token file (serve's --token-file, by default $XDG_STATE_HOME/acp-agent/serve-token there)"
			}
			return fmt.Errorf("connecting to %s: %s: %s%s", fs.Arg(0), resp.Status, bytes.TrimSpace(body), hint)
		}
		if runtime.ConnectionRefused(err) {
			return fmt.Errorf("connecting to %s: nothing is listening at %s: is acp-agent serve running there (or the SSH tunnel to it open)?", fs.Arg(0), hostPort(u))
		}
		return fmt.Errorf("connecting to %s: %w", fs.Arg(0), err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(int64(*maxLine))
	parent := ctx
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
	// stdin, one message per line, to the server. A read from a pipe
	// cannot be interrupted, so when the server ends the connection first
	// this goroutine is left blocked in it: runConnect's return ends the
	// process (connect is the program's last step), and a line read
	// meanwhile only fails to be sent.
	lines := acp.NewLineStream(stdin, io.Discard, *maxLine)
	editorClosed := make(chan bool, 1)
	go func() {
		for {
			m, err := lines.Read(ctx)
			if errors.Is(err, acp.ErrInvalidRequest) {
				fmt.Fprintln(stderr, "acp-agent connect: skipped a line:", err)
				continue
			}
			if err != nil {
				editorClosed <- true
				return
			}
			if err := ws.Write(ctx, websocket.MessageText, m.Data); err != nil {
				editorClosed <- false
				return
			}
		}
	}()
	var closeErr error
	select {
	case closed := <-editorClosed:
		if closed {
			ws.Close(websocket.StatusNormalClosure, "")
			cancel()
			<-done
			return nil // the editor closed the agent
		}
		closeErr = <-done // a write failed: so does the read
	case closeErr = <-done:
	}
	if parent.Err() != nil {
		return nil // the user stopped it (SIGINT, SIGTERM)
	}
	// The server ended the connection while the editor still talks to
	// the agent: say so, or the editor only sees its agent exit.
	// serve's close frame says why when it knows ("the client took no
	// message for 30s"); a plain "closed" is its stopping.
	why := ""
	if ce := (websocket.CloseError{}); errors.As(closeErr, &ce) && ce.Reason != "" && ce.Reason != "closed" {
		why = " (" + ce.Reason + ")"
	} else if closeErr != nil && websocket.CloseStatus(closeErr) == -1 {
		why = " (" + closeErr.Error() + ")"
	}
	return fmt.Errorf("the server at %s closed the connection%s: it stopped or restarted. Its sessions are saved there: start the agent again and reopen the session", fs.Arg(0), why)
}

// hostPort is the host and port of a ws:// or wss:// URL, the port
// filled in from the scheme.
func hostPort(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "wss" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// connectURL is the WebSocket URL of the server's http(s) or ws(s) URL.
// Plain HTTP beyond loopback is refused unless insecure, as serve refuses
// to listen there: the bearer token would cross the network in clear.
func connectURL(raw string, insecure bool) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("the server's URL: %w", err)
	}
	plain := false
	switch u.Scheme {
	case "https", "wss":
		u.Scheme = "wss"
	case "http", "ws":
		u.Scheme, plain = "ws", true
	default:
		return "", fmt.Errorf("the server's URL %q: give an https:// (or http:// on loopback) URL", u.Redacted())
	}
	if u.User != nil {
		return "", errors.New("the server's URL carries credentials: give the token with --token-file (or ACP_AGENT_TOKEN)")
	}
	if plain && !insecure && !isLoopback(u.Hostname()) {
		return "", fmt.Errorf("refusing to send the token over plain HTTP to %s, which is not loopback: use https:// (serve --tls-cert and --tls-key, or a TLS proxy), an SSH tunnel to 127.0.0.1, or --insecure on a private network (docs/remote.md)", u.Host)
	}
	return u.String(), nil
}
