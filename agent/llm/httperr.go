package llm

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"net/http"
	"strconv"
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
