package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRedactUserinfoChangesOnlyRefusedURLs: the credentials of a URL
// (a user name alone too, and in a URL that does not parse) are hidden,
// nothing else is, and a URL redactUserinfo changes is refused before
// and after (web_fetch's Redact must not change what a call does).
func TestRedactUserinfoChangesOnlyRefusedURLs(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"http://alice:pw@example.com/x", "http://xxxxx@example.com/x"},
		{"https://TOKEN@example.com", "https://xxxxx@example.com"},
		{"http://:pw@example.com/", "http://xxxxx@example.com/"},
		{"http://a@b:pw@example.com/?q=@#@", "http://xxxxx@example.com/?q=@#@"},
		{"http://alice:p%zz@example.com/%zz", "http://xxxxx@example.com/%zz"},
		{"http:alice:pw@example.com", "xxxxx@example.com"}, // no authority: all before the "@"
		{"HTTPS://alice@example.com", "HTTPS://xxxxx@example.com"},
		{"https://example.com/docs@v2?to=a@b#c@d", "https://example.com/docs@v2?to=a@b#c@d"},
		{"https://example.com", "https://example.com"},
		{"not a url", "not a url"},
	} {
		got := redactUserinfo(tc.raw)
		assert.Equal(t, tc.want, got, tc.raw)
		if got != tc.raw {
			_, err := checkFetchURL(tc.raw)
			assert.Error(t, err, "%s is refused", tc.raw)
			_, err = checkFetchURL(got)
			assert.Error(t, err, "%s is refused", got)
		}
	}
}
