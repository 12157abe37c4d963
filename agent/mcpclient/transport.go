package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
)

// Shutdown timings for stdio servers. Variables so tests can shorten them.
var (
	// terminateGrace is how long Close waits after closing a child's stdin
	// before SIGTERM, and again before SIGKILL (go-sdk's TerminateDuration;
	// its 5 s default is long for an interactive agent).
	terminateGrace = 2 * time.Second
	// pipeWaitDelay bounds how long reaping a child waits for its stderr to
	// reach EOF after it exited; a grandchild holding the pipe open must not
	// hold Close open.
	pipeWaitDelay = time.Second
	// httpCloseGrace bounds how long Close waits for an http or sse server
	// to answer the requests that end its session.
	httpCloseGrace = time.Second
)

// inheritedEnv lists the variables of our environment a stdio server gets
// (the set the MCP TypeScript SDK uses, plus locale, temp dir and zone):
// enough for interpreters and npx to work, without leaking the agent's
// secrets to every server.
var inheritedEnv = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER",
	"LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ",
}

// childEnv returns the environment of a stdio server: the inherited subset,
// then the client's variables. exec.Cmd keeps the last value of a duplicated
// name, so the client's win.
func childEnv(extra []EnvVariable) []string {
	env := make([]string, 0, len(inheritedEnv)+len(extra))
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, e := range extra {
		env = append(env, e.Name+"="+e.Value)
	}
	return env
}

// stdioCommand builds the command for a stdio server. It is not started
// here: the SDK's CommandTransport starts it and owns stdin/stdout.
func stdioCommand(s *StdioServer, dir string, stderr *lineLogger) *exec.Cmd {
	// exec.Command, not CommandContext: the process must outlive the connect
	// ctx; its end is Close's business.
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = childEnv(s.Env)
	cmd.Dir = dir
	cmd.Stderr = stderr
	cmd.WaitDelay = pipeWaitDelay
	runtime.PrepareGroup(cmd)
	return cmd
}

// lineLogger is the io.Writer a stdio server's stderr is copied into; it logs
// one record per line. Lines longer than maxStderrLine are split.
type lineLogger struct {
	log *slog.Logger

	mu  sync.Mutex
	buf []byte
}

const maxStderrLine = 16 << 10

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 || len(w.buf)+i > maxStderrLine {
			room := maxStderrLine - len(w.buf)
			if len(p) <= room {
				w.buf = append(w.buf, p...)
				break
			}
			w.buf = append(w.buf, p[:room]...)
			p = p[room:]
			w.emit()
			continue
		}
		w.buf = append(w.buf, p[:i]...)
		p = p[i+1:]
		w.emit()
	}
	return n, nil
}

// Flush logs a last line that had no newline.
func (w *lineLogger) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit()
	}
}

func (w *lineLogger) emit() {
	line := bytes.TrimSuffix(w.buf, []byte{'\r'})
	w.log.Info("mcp server stderr", "line", string(line))
	w.buf = w.buf[:0]
}

// serverTransport is the RoundTripper of one http or sse server. It sends
// requests only to the server's origin, with the client-configured headers
// added, and ends every request when the server's life ends: the SDK sends
// some requests (such as notifications/cancelled) on contexts of its own,
// and an unresponsive server must not keep connecting or Close waiting for
// them.
type serverTransport struct {
	base    http.RoundTripper
	origin  *url.URL // scheme and host the headers may be sent to
	headers []HTTPHeader
	life    context.Context
}

func (t *serverTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !sameOrigin(req.URL, t.origin) {
		// Redirects are stopped by CheckRedirect; this catches the rest,
		// such as an SSE server's endpoint event naming another origin.
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s is not %s", ErrOtherOrigin, redactURL(req.URL), redactURL(t.origin))
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.life, cancel)
	done := func() {
		stop()
		cancel()
	}
	// A RoundTripper must not modify the caller's request.
	r := req.Clone(ctx)
	for _, h := range t.headers {
		// The SDK's protocol headers take precedence over configured ones.
		if _, set := req.Header[http.CanonicalHeaderKey(h.Name)]; set {
			continue
		}
		r.Header.Add(h.Name, h.Value)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		done()
		return nil, err
	}
	// The body may be a long-lived stream: release ctx when it is closed.
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: sync.OnceFunc(done)}
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the base.
func (t *serverTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// releasingBody calls release once the body is closed.
type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

// httpClientFor returns base with its transport wrapped in a
// serverTransport for the server at rawURL.
func httpClientFor(life context.Context, base *http.Client, rawURL string, headers []HTTPHeader) (*http.Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("invalid url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid url %q: scheme must be http or https", rawURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid url %q: no host", rawURL)
	}
	// An address in the URL is checked before anything is sent, so no
	// proxy connects there either.
	if err := policy.CheckURLAddress(u); err != nil {
		return nil, err
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c := *base
	c.Transport = &serverTransport{base: rt, origin: u, headers: headers, life: life}
	// A redirect to another origin is refused, not followed without the
	// configured headers: the request still carries the SDK's session id
	// and, for a 307/308 POST, the JSON-RPC message (tool arguments).
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !sameOrigin(req.URL, u) {
			return fmt.Errorf("%w: %s redirected to %s", ErrCrossOriginRedirect, redactURL(via[len(via)-1].URL), redactURL(req.URL))
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c, nil
}

// ErrCrossOriginRedirect is wrapped by the error of a request to an http
// or sse server that redirected it to another origin.
var ErrCrossOriginRedirect = errors.New("mcp: redirect to another origin not followed")

// ErrOtherOrigin is wrapped by the error of a request the SDK tried to send
// to another origin than its server's (an SSE endpoint event elsewhere).
var ErrOtherOrigin = errors.New("mcp: request to another origin than the server's refused")

// sameOrigin reports whether a and b have the same scheme, host and port
// (the port defaulted from the scheme, the host compared without case).
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		switch strings.ToLower(u.Scheme) {
		case "http":
			return "80"
		case "https":
			return "443"
		}
		return ""
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// urlSecrets are the parts of an http or sse server's URL that may hold
// credentials, as an error's text can show them (Go's url.Error prints
// the request's whole URL): its query, raw and each value decoded, and
// its user information. Servers that take a token in the URL are common
// (?api_key=...); the client chose it, but the agent's log, its notes in
// the conversation and a failed call's result (which the model reads)
// are not where it goes.
func urlSecrets(cfg Server) []string {
	h := cfg.HTTP
	if h == nil {
		h = cfg.SSE
	}
	if h == nil {
		return nil
	}
	u, err := url.Parse(h.URL)
	if err != nil {
		// Not a URL: the text is all there is to hide.
		return []string{h.URL}
	}
	var out []string
	if u.RawQuery != "" {
		out = append(out, u.RawQuery)
		for _, vs := range u.Query() {
			for _, v := range vs {
				if len(v) >= 4 {
					out = append(out, v, url.QueryEscape(v))
				}
			}
		}
	}
	// A piece shorter than 4 is no credential, and replacing it
	// everywhere would garble the message ("http://er@host" turned each
	// "server" into "serv[redacted]").
	if u.User != nil {
		if s := u.User.String(); len(s) >= 4 {
			out = append(out, s)
		}
		if p, ok := u.User.Password(); ok && len(p) >= 4 {
			out = append(out, p)
		}
	}
	if len(u.Fragment) >= 4 {
		out = append(out, u.Fragment)
	}
	// Longest first: a whole query goes before its values.
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// redactedError is an error whose text hides secrets; errors.Is and As
// still see what it wraps.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactError is err with each of secrets in its text replaced by
// "[redacted]" (err itself when none is there).
func redactError(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	msg := err.Error()
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// redactURL drops user info and the query, which may hold credentials.
func redactURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery = nil, "", false
	return c.String()
}

// detachedTransport makes a Transport's connection independent of the
// connect ctx once connecting succeeded. The SSE client transport ties its
// long-lived GET stream to the ctx given to Connect, which would end the
// session when Connect's timeout fires; so the inner transport gets life
// instead, a ctx that the connect ctx cancels only while connecting (see
// connectServer) and Close cancels afterwards. It also remembers the
// connection, because Client.Connect does not close it on every error path.
type detachedTransport struct {
	inner mcp.Transport
	life  context.Context
	conn  mcp.Connection
}

func (t *detachedTransport) Connect(context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(t.life)
	t.conn = c
	return c, err
}
