//go:build unix

package runtime

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadWorkspaceFileHoldsAgainstADirectorySwappedForASymlink: a skill's
// file read through a directory that a command keeps swapping between a
// real directory and a symlink to ~/.ssh (the check resolves one, the
// open may meet the other, and O_NOFOLLOW guards only the last name).
// The secret is never returned. Checking only before the open leaked it
// within a few dozen reads.
func TestReadWorkspaceFileHoldsAgainstADirectorySwappedForASymlink(t *testing.T) {
	home := t.TempDir()
	secret := filepath.Join(home, ".ssh")
	require.NoError(t, os.MkdirAll(secret, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(secret, "id_rsa"), []byte("SECRET-KEY"), 0o600))
	ws := filepath.Join(home, "proj")
	skill := filepath.Join(ws, ".acp-agent", "skills", "evil")
	sub, real, link := filepath.Join(skill, "sub"), filepath.Join(skill, "realsub"), filepath.Join(skill, "linksub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "id_rsa"), []byte("decoy"), 0o644))
	require.NoError(t, os.Symlink(secret, link))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			// sub: the real directory, then the symlink, then back.
			os.Rename(sub, real)
			os.Rename(link, sub)
			os.Rename(sub, link)
			os.Rename(real, sub)
		}
	})
	defer func() { close(stop); wg.Wait() }()

	reads, decoys := 0, 0
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end) || decoys == 0; reads++ {
		for _, denied := range [][]string{nil, {secret}} {
			data, _, err := ReadWorkspaceFile(filepath.Join(sub, "id_rsa"), skill, ws, denied, 1<<20)
			require.False(t, err == nil && string(data) == "SECRET-KEY", "read %d returned the secret (denied %v)", reads, denied)
			if err == nil {
				decoys++
			}
		}
	}
	t.Logf("%d reads, %d of the decoy", reads, decoys)
}
