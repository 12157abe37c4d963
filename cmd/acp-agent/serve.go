package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acphttp"
	"github.com/acp-agent/acp-agent/agent/acpv2agent"
	"github.com/acp-agent/acp-agent/persistence"
)

// defaultListen is where serve listens without --listen: loopback only.
const defaultListen = "127.0.0.1:7420"

// serveFlags are the flags of acp-agent serve beyond the common ones.
type serveFlags struct {
	listen         string
	roots          stringList
	tokenFile      string
	tlsCert        string
	tlsKey         string
	insecure       bool
	allowOrigins   stringList
	allowMCPStdio  bool
	maxConnections int
	maxSessions    int
	maxConnSess    int
	maxStreams     int
	maxBuffered    int
	stall          time.Duration
	idle           time.Duration
	keepAlive      time.Duration
}

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func (f *serveFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.listen, "listen", defaultListen, "address to listen on; an address that is not loopback needs --tls-cert and --tls-key, or --insecure")
	fs.Var(&f.roots, "root", "a directory clients may open sessions in (cwd and additionalDirectories must be inside one); repeatable (default: the current directory)")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token clients must send; created with a new random token (mode 0600) if missing (default $XDG_STATE_HOME/acp-agent/serve-token)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate (PEM) for HTTPS and HTTP/2")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS private key (PEM)")
	fs.BoolVar(&f.insecure, "insecure", false, "allow plain HTTP on an address that is not loopback (behind a TLS proxy on the same host or network)")
	fs.Var(&f.allowOrigins, "allow-origin", "a browser origin (scheme://host[:port]) allowed to connect; repeatable (default: none, requests with an Origin header are refused)")
	fs.BoolVar(&f.allowMCPStdio, "allow-mcp-stdio", false, "let clients start stdio MCP servers (commands on this machine) in their sessions")
	fs.IntVar(&f.maxConnections, "max-connections", 256, "most connections (HTTP and WebSocket) open at once")
	fs.IntVar(&f.maxSessions, "max-sessions", 512, "most sessions open at once, all clients together")
	fs.IntVar(&f.maxConnSess, "max-sessions-per-connection", 64, "most sessions one connection may have open")
	fs.IntVar(&f.maxStreams, "max-streams", 4096, "most event streams (SSE) open at once")
	fs.IntVar(&f.maxBuffered, "max-buffered-bytes", 1<<20, "most bytes one event stream holds for a client that reads slower than the agent writes")
	fs.DurationVar(&f.stall, "stall-timeout", 30*time.Second, "drop an event stream (or WebSocket) whose client takes nothing this long while output waits")
	fs.DurationVar(&f.idle, "idle-timeout", 5*time.Minute, "end an HTTP connection with no request and no open event stream for this long")
	fs.DurationVar(&f.keepAlive, "keep-alive", 15*time.Second, "interval of event-stream keep-alive comments and WebSocket pings")
}

// runServe is acp-agent serve: the agent over ACP's Streamable HTTP and
// WebSocket transport, for any number of clients (docs/remote.md). It
// writes nothing to stdout; the address and a generated token go to
// stderr.
func runServe(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	var f serveFlags
	st, err := parseSettings("acp-agent serve", args, stdout, stderr, withCredentials(os.Getenv), f.add)
	if err != nil {
		return err
	}
	if st.fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see acp-agent serve --help)", st.fs.Arg(0))
	}
	if st.version {
		return printVersion(stdout)
	}
	roots, named, err := serveRoots(f.roots)
	if err != nil {
		return err
	}
	tlsConf, err := f.tlsConfig()
	if err != nil {
		return err
	}
	if err := checkListen(f.listen, tlsConf != nil, f.insecure); err != nil {
		return err
	}
	tokenPath := f.tokenFile
	if tokenPath == "" {
		dir := persistence.DefaultDir(os.Getenv)
		if dir == "" {
			return errors.New("no state directory for the token file (set XDG_STATE_HOME or HOME), give --token-file")
		}
		tokenPath = filepath.Join(filepath.Dir(dir), "serve-token")
	}
	token, created, err := loadOrCreateToken(tokenPath)
	if err != nil {
		return err
	}
	if created {
		// Printed once, here: the file keeps it (mode 0600).
		mode := " (mode 0600)"
		if onWindows {
			mode = "" // no mode bits: the folder's ACL decides
		}
		fmt.Fprintf(stderr, "acp-agent serve: generated a bearer token in %s%s; clients send it as\n  Authorization: Bearer %s\n", tokenPath, mode, token)
	}

	st.tokenFile = tokenPath // denied to confined commands
	a, log, cleanup, err := st.newAgent(stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	defer a.Close()
	guard := &rootsGuard{host: a.Host(), roots: roots, given: named, allowMCPStdio: f.allowMCPStdio}
	srv := acp.NewServer(&confinedAgent{Agent: a, rootsGuard: guard},
		acp.Options{MaxMessageBytes: st.maxLine, Logger: log, MaxSessions: f.maxSessions, MaxSessionsPerConnection: f.maxConnSess,
			V2: &confinedAgentV2{Agent: acpv2agent.New(a.Host()), rootsGuard: guard}})
	h, err := acphttp.NewHandler(acphttp.Options{Token: token, AllowedOrigins: f.allowOrigins,
		MaxConnections: f.maxConnections, MaxStreams: f.maxStreams, MaxSessionStreams: f.maxConnSess,
		MaxBodyBytes: st.maxLine, MaxBufferedBytes: f.maxBuffered, StallTimeout: f.stall, IdleTimeout: f.idle,
		KeepAlive: f.keepAlive, Logger: log, Telemetry: st.recorder})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/acp", h)
	mux.HandleFunc("/healthz", healthz(h))
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		TLSConfig:         tlsConf,
		Protocols:         new(http.Protocols),
	}
	hs.Protocols.SetHTTP1(true)
	if tlsConf != nil {
		hs.Protocols.SetHTTP2(true)
	} else {
		hs.Protocols.SetUnencryptedHTTP2(true) // h2c, for local clients
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return err
	}
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
		ln = tls.NewListener(ln, tlsConf)
	}
	fmt.Fprintf(stderr, "acp-agent serve: listening on %s://%s/acp (roots: %s)\n", scheme, ln.Addr(), strings.Join(roots, ", "))

	// The ACP connections live on their own context: on SIGTERM they are
	// wound down first (turns cancelled and answered, sessions saved)
	// while the HTTP server still delivers their last messages.
	connCtx, endConns := context.WithCancel(context.WithoutCancel(ctx))
	defer endConns()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(connCtx, h) }()
	httpDone := make(chan error, 1)
	go func() { httpDone <- hs.Serve(ln) }()

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "cause", context.Cause(ctx))
	case runErr = <-httpDone:
	}
	h.Close()
	endConns()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		log.Warn("connections still open 10 s after shutdown began")
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutCtx); err != nil {
		hs.Close()
	}
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	return runErr
}

// healthz answers liveness probes; an authorized caller also gets the
// transport's counters (connections, sessions, streams).
func healthz(h *acphttp.Handler) http.HandlerFunc {
	started := time.Now()
	return func(w http.ResponseWriter, r *http.Request) {
		body := map[string]any{"status": "ok", "uptimeSeconds": int(time.Since(started).Seconds())}
		if code, msg := h.RefuseURLCredentials(r); code != 0 {
			http.Error(w, msg, code)
			return
		}
		if r.Header.Get("Authorization") != "" {
			if code, msg := h.Authorize(w, r); code != 0 {
				http.Error(w, msg, code)
				return
			}
			body["transport"] = h.Stats()
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(body)
	}
}

func (f *serveFlags) tlsConfig() (*tls.Config, error) {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if f.tlsCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}, nil
}

// checkListen refuses to serve plain HTTP beyond this machine unless told
// to (--insecure: a TLS proxy in front does the encryption).
func checkListen(addr string, hasTLS, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", addr, err)
	}
	if hasTLS || insecure || isLoopback(host) {
		return nil
	}
	what := host
	if what == "" {
		what = "every interface"
	}
	return fmt.Errorf("refusing to serve plain HTTP on %s, which is not loopback: the token and the code would cross the network unencrypted; give --tls-cert and --tls-key, or --insecure when a TLS proxy on this host terminates TLS (docs/remote.md)", what)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loadOrCreateToken reads the token file (readToken), or creates it with
// a new random token.
func loadOrCreateToken(path string) (token string, created bool, err error) {
	token, err = readToken(path)
	switch {
	case err == nil:
		return token, false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", false, err
	}
	token = base64.RawURLEncoding.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("token file: %w", err)
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("token file: %w", err)
	}
	if _, err := fmt.Fprintln(fh, token); err != nil {
		fh.Close()
		return "", false, fmt.Errorf("token file: %w", err)
	}
	if err := fh.Close(); err != nil {
		return "", false, fmt.Errorf("token file: %w", err)
	}
	return token, true, nil
}

// readToken reads a bearer token from path, which must be private like an
// SSH key: a regular file (a FIFO would hold the reader for ever), of
// this user (root reads a file another user planted at the path, mode
// 0600 and all, whose token that user knows), with no group or other
// access. The checks hold for the file opened, whatever the path names
// by then. A missing file is fs.ErrNotExist.
func readToken(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("token file %s is not a regular file (%s)", path, info.Mode().Type())
	}
	fh, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	defer fh.Close()
	if info, err = fh.Stat(); err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	// Windows has no mode bits (Stat says 0666 for every file): there
	// the folder's ACL keeps the file private, and the default one is
	// in the user's profile (%LOCALAPPDATA%), which only the user,
	// administrators and SYSTEM can read.
	if perm := info.Mode().Perm(); perm&0o077 != 0 && !onWindows {
		return "", fmt.Errorf("token file %s is readable by others (mode %#o): chmod 600 %s", path, perm, path)
	}
	if err := ownedByThisUser(info); err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(fh, 64<<10))
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if len(token) < 16 {
		return "", fmt.Errorf("token file %s: the token is shorter than 16 characters", path)
	}
	return token, nil
}
