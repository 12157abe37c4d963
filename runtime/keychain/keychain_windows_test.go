package keychain

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Credential Manager keeps a secret under service:account, returns it
// unchanged (non-ASCII included), replaces it, and forgets it.
func TestWindowsCredentialManagerRoundTrip(t *testing.T) {
	s := Default()
	require.NotNil(t, s, "Windows always has the Credential Manager")
	const svc, acct = "acp-agent-test", "openai"
	t.Cleanup(func() { _ = s.Delete(svc, acct) })
	_, err := s.Get(svc, acct)
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Set(svc, acct, "sk-first-ключ"))
	got, err := s.Get(svc, acct)
	require.NoError(t, err)
	assert.Equal(t, "sk-first-ключ", got)
	require.NoError(t, s.Set(svc, acct, "sk-second"))
	got, _ = s.Get(svc, acct)
	assert.Equal(t, "sk-second", got)
	require.NoError(t, s.Delete(svc, acct))
	_, err = s.Get(svc, acct)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Error(t, s.Set(svc, acct, "bad\nkey"), "control characters are refused")
}
