package llm

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter reads the delay the server asked for: retry-after-ms (in
// milliseconds, OpenAI), else retry-after (seconds or an HTTP date).
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			return scaled(ms, time.Millisecond)
		}
	}
	v := h.Get("retry-after")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return scaled(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// scaled returns f units, or 0 for a value that is negative, NaN or too
// large for a Duration.
func scaled(f float64, unit time.Duration) time.Duration {
	d := f * float64(unit)
	if !(d > 0) || d >= math.MaxInt64 {
		return 0
	}
	return time.Duration(d)
}

// Truncate shortens s to at most n bytes without splitting a UTF-8 rune.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// IsCertificateError reports whether err is a TLS certificate failure:
// unlike a refused or reset connection, retrying will not help.
func IsCertificateError(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) ||
		errors.As(err, &invalid) || errors.As(err, &hostname)
}

// PageError is the message of an error answered with an HTML page (a
// proxy's or a web server's, not the API's): the page's title or the
// status text instead of the markup, and for a 404 or 405 (a path the
// server has no API at) where the base URL is set.
// ok is false when body is not a page.
func PageError(status int, contentType string, body []byte, baseURLEnv string) (msg string, ok bool) {
	head := strings.TrimSpace(string(body[:min(len(body), 512)]))
	if !strings.HasPrefix(strings.ToLower(contentType), "text/html") && !strings.HasPrefix(head, "<") {
		return "", false
	}
	msg = http.StatusText(status)
	lower := strings.ToLower(string(body))
	if i := strings.Index(lower, "<title>"); i >= 0 {
		if j := strings.Index(lower[i:], "</title>"); j > len("<title>") {
			if title := strings.Join(strings.Fields(string(body[i+len("<title>"):i+j])), " "); title != "" {
				msg = Truncate(title, 200)
			}
		}
	}
	msg += " (the server answered with an HTML page, not an API error"
	if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
		msg += "; is the base URL right? " + baseURLSources(baseURLEnv)
	}
	return msg + ")", true
}

// ConnectionHint says what to check when a request got no answer because
// nothing listens at the server's address (a local server not started)
// or its host name is unknown: the server, and where its address is set
// (baseURLEnv, the config file). "" for other failures. refused says
// whether err is a refused dial, which only the OS's error numbers tell
// (runtime.ConnectionRefused: the core may not depend on runtime).
func ConnectionHint(err error, refused bool, baseURLEnv string) string {
	var dns *net.DNSError
	switch {
	case refused:
		return " (nothing answers at that address: is the server running? Its address is the base URL: " + baseURLSources(baseURLEnv) + ")"
	case errors.As(err, &dns) && dns.IsNotFound:
		return " (no such host: check the base URL: " + baseURLSources(baseURLEnv) + ")"
	}
	return ""
}

// baseURLSources names where a provider's base URL is set, for a hint.
func baseURLSources(env string) string {
	return env + ", or the model's baseUrl in the config file"
}
