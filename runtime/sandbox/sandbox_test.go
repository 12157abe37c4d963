package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Landlock only grants, so "everything but the secrets" is the siblings
// of every directory on the way down to each secret, never the secret or
// one of its ancestors.
func TestReadGrantsGoAroundEveryDeniedPath(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".ssh", ".aws", "src/app", ".config/gh", ".config/nvim"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, ".netrc"), []byte("x"), 0o600))
	denied := []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".config/gh"), filepath.Join(home, ".netrc"), filepath.Join(home, "missing")}
	grants := readGrants(denied)
	for _, d := range denied[:3] {
		for _, g := range grants {
			assert.False(t, within(g, d), "%s is readable through the grant %s", d, g)
		}
	}
	for _, want := range []string{filepath.Join(home, ".aws"), filepath.Join(home, "src"), filepath.Join(home, ".config/nvim")} {
		assert.True(t, slices.Contains(grants, want), "%s is not granted: %v", want, grants)
	}
	assert.False(t, slices.Contains(grants, "/"), "the root itself would grant everything")
	assert.Equal(t, []string{"/"}, readGrants(nil), "nothing denied: everything readable")
}

// The helper's argv and environment carry the command and the policy;
// TMPDIR points at the session's directory.
func TestCommandWrapsTheProgramAndCarriesThePolicy(t *testing.T) {
	exe, args, env, err := Command("/bin/agent", Policy{WritableRoots: []string{"/w"}, TempDir: "/t"}, "/usr/bin/bash", []string{"bash", "-c", "true"})
	require.NoError(t, err)
	assert.Equal(t, "/bin/agent", exe)
	assert.Equal(t, []string{"/bin/agent", HelperArg, "/usr/bin/bash", "bash", "-c", "true"}, args)
	assert.Contains(t, env, "TMPDIR=/t")
	t.Setenv(policyEnv, env[0][len(policyEnv)+1:])
	p, err := readPolicy()
	require.NoError(t, err)
	assert.Equal(t, []string{"/w"}, p.WritableRoots)
	_, set := os.LookupEnv(policyEnv)
	assert.False(t, set, "the command does not see the policy")
	t.Setenv(policyEnv, `{"writableRoots":["relative"]}`)
	_, err = readPolicy()
	assert.Error(t, err, "relative paths are refused")
}
