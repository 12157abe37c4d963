package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/internal/winetest"
)

// Windows paths: drive letters in either case, \\?\ and UNC spellings of
// the same root, paths with spaces; and what Windows resolves to another
// file than the name says (8.3 short names, alternate data streams,
// device names) is refused.
func TestWindowsPathsResolveInsideTheirRoots(t *testing.T) {
	p := FS{Roots: []string{`C:\Users\me\My Project`, `\\?\UNC\server\share\repo`}, DeniedPathPrefixes: DefaultDeniedPrefixes()}
	inside := map[string]string{
		`C:\Users\me\My Project\src\main.go`:       `src\main.go`,
		`c:\users\ME\my project\src\main.go`:       `src\main.go`,
		`\\?\C:\Users\me\My Project\README.md`:     `README.md`,
		`\\server\share\repo\a b\c.txt`:            `a b\c.txt`,
		`\\?\UNC\server\share\repo\x.txt`:          `x.txt`,
		`C:\Users\me\My Project\sub\..\ok.txt`:     `ok.txt`,
		`C:\Users\me\My Project\.env.example`:      `.env.example`,
		`C:\Users\me\My Project\notes~draft.txt`:   `notes~draft.txt`,
		`C:\Users\me\My Project\version~12345.txt`: `version~12345.txt`,
	}
	for path, want := range inside {
		_, rel, err := p.Resolve(path, AccessWrite)
		if assert.NoError(t, err, path) {
			assert.Equal(t, want, rel, path)
		}
	}
	for _, path := range []string{
		`C:\Users\me\My Project\.git\config`,
		`C:\Users\me\My Project\.GIT\config`,
		`C:\Users\me\My Project\.git.\config`,
		`C:\Users\me\My Project\GIT~1\config`,
		`C:\Users\me\My Project\git~2\hooks\pre-commit`,
		`C:\Users\me\My Project\ENV~1`,
		`C:\Users\me\My Project\ENV~1.LOC`,
		`C:\Users\me\My Project\.git::$INDEX_ALLOCATION\config`,
		`C:\Users\me\My Project\a.txt:hidden`,
		`C:\Users\me\My Project\NUL`,
		`C:\Users\me\My Project\sub\COM1`,
		`C:\Users\me\My Project Else\x.txt`,
		`D:\Users\me\My Project\x.txt`,
		`\\server\share\other\x.txt`,
		`\\.\C:\Users\me\My Project\x.txt`,
		`C:\Users\me\My Project\..\secret.txt`,
		`My Project\x.txt`,
		// More spellings Windows resolves elsewhere than they say.
		`C:/Users/me/My Project/.git/config`,
		`C:\Users\me/My Project\.GIT/hooks/pre-commit`,
		`C:\Users\me\My Project\.git. .\config`,
		`C:\Users\me\My Project\.env::$DATA`,
		`C:\Users\me\My Project\.env:`,
		`C:\Users\me\My Project\.Env.Local `,
		`C:\Users\me\My Project\CONIN$`,
		"C:\\Users\\me\\My Project\\sub\\COM\u00b9",
		`C:\Users\me\My Project\lpt1.txt`,
		`C:\Users\me\My Project\C:x.txt`,
		`C:My Project\x.txt`,
		`\\?\C:\Users\me\My Project\..\secret.txt`,
		`\\?\GLOBALROOT\Device\HarddiskVolume1\Users\me\My Project\x.txt`,
		`\\localhost\C$\Users\me\My Project\x.txt`,
		`\\127.0.0.1\C$\Users\me\My Project\x.txt`,
		`\\?\UNC\localhost\C$\Users\me\My Project\x.txt`,
		`\\attacker\share\x.txt`,
		"C:\\Users\\me\\My Project\\.g\u0131t\\config",
	} {
		_, _, err := p.Resolve(path, AccessRead)
		assert.Error(t, err, "%s must be refused", path)
	}
}

func TestCanonicalPathDropsOnlyLongPathPrefixes(t *testing.T) {
	for in, want := range map[string]string{
		`\\?\C:\w`:             `C:\w`,
		`\\?\d:\`:              `d:\`,
		`\\?\UNC\host\share\x`: `\\host\share\x`,
		`\\?\unc\host\share`:   `\\host\share`,
		`\\.\C:\w`:             `\\.\C:\w`,
		`\\?\Volume{1234}\w`:   `\\?\Volume{1234}\w`,
		`C:\w`:                 `C:\w`,
		`\\host\share\w`:       `\\host\share\w`,
	} {
		require.Equal(t, want, CanonicalPath(in), in)
	}
}

// Denied paths compare as Windows names them: drive letters and names in
// any case, the \\?\ spelling of the same path; a name that only starts
// like one is not under it, and a root inside one reaches its files.
func TestWindowsDeniedPaths(t *testing.T) {
	p := FS{Roots: []string{`C:\Users\me`, `C:\Users\me\AppData\Local\acp-agent\sessions\s1\offloaded`},
		DeniedPaths: []string{`C:\Users\me\.ssh`, `C:\Users\me\AppData\Local\acp-agent`}}
	for _, path := range []string{`C:\Users\me\.ssh\id_rsa`, `c:\users\ME\.SSH\id_rsa`, `\\?\C:\Users\me\.ssh\id_rsa`,
		`C:\Users\me\.ssh.\id_rsa`, `C:\Users\me\AppData\Local\acp-agent\serve-token`, `C:\Users\me\x\..\.ssh\id_rsa`} {
		_, _, err := p.Resolve(path, AccessRead)
		assert.ErrorIs(t, err, ErrPermissionDenied, path)
	}
	for _, path := range []string{`C:\Users\me\.sshx\a`, `C:\Users\me\AppData\Local\acp-agent\sessions\s1\offloaded\1.out`, `C:\Users\me\src\a.go`} {
		_, _, err := p.Resolve(path, AccessRead)
		assert.NoError(t, err, path)
	}
}

// The protected paths hold on Windows too, under the user's profile:
// writes refused whatever the case or spelling, reads allowed.
func TestWindowsProtectedPaths(t *testing.T) {
	p := FS{Roots: []string{`C:\Users\me`}, ProtectedPaths: []string{`C:\Users\me\.gitconfig`, `C:\Users\me\.config\git`}}
	for _, path := range []string{`C:\Users\me\.gitconfig`, `c:\users\ME\.GITCONFIG`, `\\?\C:\Users\me\.gitconfig`, `C:\Users\me\.config\git\config`, `C:\Users\me\.gitconfig.`} {
		_, _, err := p.Resolve(path, AccessWrite)
		assert.ErrorIs(t, err, ErrPermissionDenied, path)
		_, _, err = p.Resolve(path, AccessRead)
		assert.NoError(t, err, path)
	}
	_, _, err := p.Resolve(`C:\Users\me\notes.txt`, AccessWrite)
	require.NoError(t, err)
}

// A PATH entry inside a root is dropped however Windows spells it: its
// 8.3 short name (the volume's own, asked with GetShortPathName), other
// letter case, the \\?\ prefix, and for a directory not made yet, a
// short spelling of the part that exists.
func TestWindowsCommandPathDropsOtherSpellingsOfEntriesInsideRoots(t *testing.T) {
	root := filepath.Join(t.TempDir(), "a workspace with a long name")
	bin := filepath.Join(root, "node_modules", ".bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	entries := []string{strings.ToUpper(bin), `\\?\` + bin}
	if s := winetest.ShortPath(bin); s != "" && s != bin {
		entries = append(entries, s, filepath.Join(winetest.ShortPath(root), "tools"))
	} else {
		t.Log("this volume gives no 8.3 short names: only case and \\\\?\\ are tried")
	}
	system := os.Getenv("SystemRoot")
	for _, e := range entries {
		got, dropped := CommandPath(e+";"+system, []string{root}, nil)
		assert.Equal(t, filepath.Clean(system), got, "%s must be dropped", e)
		assert.Len(t, dropped, 1, e)
	}
}
