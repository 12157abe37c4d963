package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/policy"
)

// Limits of web_fetch.
const (
	webFetchMaxBytes  = 5 << 20
	webFetchTimeout   = 30 * time.Second
	webFetchRedirects = 5
)

type fetchArgs struct {
	URL string `json:"url" jsonschema:"the http or https URL" schema:"minLength=1"`
}

// checkFetchURL accepts http(s) URLs without credentials in them (a
// password without a user name is credentials too) whose host, if it is
// an address, is not one web_fetch refuses.
func checkFetchURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL, credentials and all.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("only http and https URLs can be fetched, not %q", u.Scheme)
	}
	if u.User != nil {
		return nil, errors.New("the URL carries credentials; web_fetch never sends any")
	}
	if u.Hostname() == "" {
		return nil, errors.New("the URL has no host")
	}
	if a, err := netip.ParseAddr(u.Hostname()); err == nil {
		if err := policy.CheckDialAddress(a); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// redactUserinfo is raw with what stands before the last "@" of its
// authority (a user name, a password, a token) replaced by "xxxxx", also
// when raw does not parse: how a URL the model gave is shown, stored and
// logged. url.URL.Redacted keeps the user name, which is often the token.
func redactUserinfo(raw string) string {
	start := 0
	if i := strings.Index(raw, "//"); i >= 0 {
		start = i + 2
	}
	end := len(raw)
	if j := strings.IndexAny(raw[start:], "/?#"); j >= 0 {
		end = start + j
	}
	at := strings.LastIndex(raw[start:end], "@")
	if at < 0 {
		return raw
	}
	return raw[:start] + "xxxxx" + raw[start+at:]
}

// cgnat is the shared address space of carrier-grade NAT (RFC 6598):
// private networks in all but name (a Tailscale network's addresses).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// fetchGuard keeps one fetch to what its URL names. An address on this
// machine (loopback, or unspecified, which reaches it) or on a private
// network (RFC 1918, IPv6 unique local, CGNAT) is connected to only for
// the host and port the URL names, and one on this machine only when the
// URL names it so (an address literal there, localhost, *.localhost): a
// redirect to another host, or a public-looking name that resolves
// there (DNS rebinding, at the moment of the connection), would take
// the approval of "Fetch https://example.com/" to the user's own
// services (a dev server, an admin page, acp-agent serve).
type fetchGuard struct {
	host, port string // of the URL, as dialled: no brackets, default port
}

func newFetchGuard(u *url.URL) fetchGuard {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return fetchGuard{host: u.Hostname(), port: port}
}

// check is the rule for a connection to a, dialled for host:port.
func (g fetchGuard) check(host, port string, a netip.Addr) error {
	if err := policy.CheckDialAddress(a); err != nil {
		return err
	}
	b := policy.ReachedAddress(a)
	local := b.IsLoopback() || b.IsUnspecified()
	if !local && !b.IsPrivate() && !cgnat.Contains(b) {
		return nil
	}
	where := "a private network"
	if local {
		where = "this machine"
	}
	if !strings.EqualFold(host, g.host) || port != g.port {
		return fmt.Errorf("%s (%s) is on %s, and the URL fetched names %s: web_fetch does not follow a redirect there", net.JoinHostPort(host, port), a, where, net.JoinHostPort(g.host, g.port))
	}
	if local && !namesThisMachine(host) {
		return fmt.Errorf("%s resolves to %s, on this machine, which its name does not say: web_fetch fetches this machine only by a URL naming it (localhost, 127.0.0.1)", host, a)
	}
	return nil
}

// namesThisMachine reports whether host says it is this machine: an
// address literal of loopback (or unspecified), localhost or a name under
// .localhost (RFC 6761).
func namesThisMachine(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	a = a.WithZone("").Unmap()
	return a.IsLoopback() || a.IsUnspecified()
}

// fetchClient sends no cookies and no credentials (a fresh client with
// no jar; only the URL the model gave, which holds none), follows at
// most webFetchRedirects redirects and only to http(s) URLs without
// credentials, and never connects to an address policy.CheckDialAddress refuses,
// nor to this machine or a private network beyond what u names
// (fetchGuard): the check is made on the address each connection is
// dialled to, so names that resolve there (DNS, /etc/hosts) and
// redirects are covered.
func fetchClient(u *url.URL) *http.Client {
	guard := newFetchGuard(u)
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		dialer := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("web_fetch dials addresses only, not %q: %w", address, err)
			}
			return guard.check(host, port, ap.Addr())
		}}
		return dialer.DialContext(ctx, network, addr)
	}
	tr := &http.Transport{DialContext: dial, Proxy: nil, TLSHandshakeTimeout: 10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second, MaxResponseHeaderBytes: 64 << 10}
	return &http.Client{Transport: tr, Timeout: webFetchTimeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= webFetchRedirects {
			return fmt.Errorf("more than %d redirects", webFetchRedirects)
		}
		if _, err := checkFetchURL(req.URL.String()); err != nil {
			return fmt.Errorf("redirect to %s refused: %w", redactUserinfo(req.URL.String()), err)
		}
		req.Header.Del("Authorization")
		req.Header.Del("Cookie")
		return nil
	}}
}

// webFetchTool fetches a URL: HTML becomes Markdown, other text is
// returned as it is. It is network access, so it asks like a command,
// and it obeys the sandbox's network rule for the session's mode.
func (w *Workspace) webFetchTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[fetchArgs]{
		Name: ToolWebFetch,
		Description: "Fetch an http(s) URL and return it as text: an HTML page turned into Markdown, other text as it is. " +
			"At most 5 MB are read; the result for you is cut further. Use it for documentation and references.\n" +
			`Example: {"url": "https://pkg.go.dev/net/http#Client"}`,
		ShortDescription: "Fetch a web page as Markdown",
		// A URL with credentials is refused; they are never shown or
		// stored either.
		Redact: func(a fetchArgs) (fetchArgs, bool) {
			r := redactUserinfo(a.URL)
			return fetchArgs{URL: r}, r != a.URL
		},
		Describe: func(a fetchArgs) (agent.ToolCallInfo, error) {
			u, err := checkFetchURL(a.URL)
			if err != nil {
				return agent.ToolCallInfo{Kind: agent.ToolKindFetch, Title: "Fetch " + markdown.Code(redactUserinfo(a.URL))}, err
			}
			return agent.ToolCallInfo{Kind: agent.ToolKindFetch, Title: "Fetch " + markdown.Code(u.Redacted()), Action: policy.ActionOther}, nil
		},
		Run: func(ctx context.Context, a fetchArgs) (agent.ToolResult, error) {
			u, err := checkFetchURL(a.URL)
			if err != nil {
				return agent.ToolResult{}, err
			}
			if w.Sandboxed() && !w.cfg.Sandbox.Policy.Network &&
				!(w.cfg.SandboxNetworkInFullAccess && agent.RunningMode(ctx) == policy.ModeFullAccess) {
				return agent.ToolResult{}, errors.New("[blocked by the sandbox: the network is off in this session's mode] web_fetch follows the sandbox's network setting; " +
					"ask the user to switch to full-access mode or to turn the sandbox's network on")
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			if err != nil {
				return agent.ToolResult{}, err
			}
			req.Header.Set("User-Agent", "acp-agent web_fetch")
			req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.1")
			resp, err := fetchClient(u).Do(req)
			if err != nil {
				return agent.ToolResult{}, fmt.Errorf("fetching %s: %w", u.Redacted(), err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(io.LimitReader(resp.Body, webFetchMaxBytes+1))
			if err != nil {
				return agent.ToolResult{}, fmt.Errorf("reading %s: %w", u.Redacted(), err)
			}
			cut := len(data) > webFetchMaxBytes
			if cut {
				data = data[:webFetchMaxBytes]
			}
			mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			var text string
			switch {
			case mt == "text/html" || mt == "application/xhtml+xml":
				md, err := htmltomarkdown.ConvertString(string(data), converter.WithDomain(resp.Request.URL.String()))
				if err != nil {
					return agent.ToolResult{}, fmt.Errorf("turning %s into Markdown: %w", u.Redacted(), err)
				}
				text = md
			case strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "application/xml" || mt == "":
				if !utf8.Valid(data) {
					return agent.ToolResult{}, fmt.Errorf("%s is not UTF-8 text", u.Redacted())
				}
				text = string(data)
			default:
				return agent.ToolResult{}, fmt.Errorf("%s is %s, not text; web_fetch returns text only", u.Redacted(), mt)
			}
			head := fmt.Sprintf("%s (HTTP %d)\n\n", resp.Request.URL.Redacted(), resp.StatusCode)
			if cut {
				text += fmt.Sprintf("\n\n[... cut: the response is more than %d bytes]", webFetchMaxBytes)
			}
			return agent.ToolResult{Text: head + text, IsError: resp.StatusCode >= 400}, nil
		},
	})
}
