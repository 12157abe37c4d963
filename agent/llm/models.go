package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// ServerModel is a model a provider's server says it offers.
type ServerModel struct {
	ID string
	// Name is the server's display name; "" when it gives none.
	Name string
	// ContextWindow and MaxOutputTokens are in tokens; 0 when the server
	// does not say.
	ContextWindow   int
	MaxOutputTokens int
}

// ModelLister is a provider that can ask its server which models it
// offers (GET /v1/models and the like).
type ModelLister interface {
	ListModels(ctx context.Context) ([]ServerModel, error)
}

// MaxModelListBytes caps a model list response (OpenRouter's, the
// longest, is about 1 MB).
const MaxModelListBytes = 8 << 20

// GetJSON sends a request for a small JSON document (a model list) and
// decodes the response into out. Redirects are not followed (they would
// carry the API key elsewhere), the body is read up to limit bytes, and
// errors pass through redact, which removes the key.
func GetJSON(ctx context.Context, client *http.Client, method, url string, header http.Header, body io.Reader, limit int64, out any, redact func(string) string) error {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return fmt.Errorf("%s", redact(err.Error()))
	}
	req.Header = header
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("%s", redact(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d", method, redact(url), resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("%s %s: %s", method, redact(url), redact(err.Error()))
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("%s %s: the response is over %d bytes", method, redact(url), limit)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: not the expected JSON: %v", method, redact(url), err)
	}
	return nil
}
