package testkit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Test servers speaking the providers' wire formats (as in package
// agent's tests).

// Bodies is a test server that answers the i-th request with responses[i]
// and records the request Bodies.
type Bodies struct {
	mu  sync.Mutex
	got []map[string]any
}

func (b *Bodies) Serve(t *testing.T, contentType string, responses ...string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(data, &body)
		b.mu.Lock()
		b.got = append(b.got, body)
		n := len(b.got)
		b.mu.Unlock()
		if n > len(responses) {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, responses[n-1])
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (b *Bodies) Request(t *testing.T, i int) map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	require.Greater(t, len(b.got), i)
	return b.got[i]
}

func AnthropicEvents(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var typ struct{ Type string }
		_ = json.Unmarshal([]byte(e), &typ)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ.Type, e)
	}
	return b.String()
}

func FailWith(w http.ResponseWriter, status int, msg string, headers ...string) {
	for i := 0; i+1 < len(headers); i += 2 {
		w.Header().Set(headers[i], headers[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"server_error"}}`, msg)
}
