package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFSDeniedPaths: an absolute denied path is refused for reads and
// writes, with everything under it, from any root that contains it; a
// name that only starts like it (~/.sshx) is not under it; a root that is
// the denied path or inside it (the user's own choice, the agent's kept
// outputs) reaches its files, and the longest root decides for nested
// roots; case variants are the same path, as on case-insensitive
// filesystems.
func TestFSDeniedPaths(t *testing.T) {
	skipOnWindows(t)
	p := FS{
		Roots: []string{"/home/u", "/home/u/.local/state/acp/sessions/s1/offloaded", "/home/u/.ssh/keys-ws",
			"/home/u/proj", "/srv"},
		ReadOnlyRoots: []string{"/home/u/.local/state/acp/sessions/s1/offloaded"},
		DeniedPaths:   []string{"/home/u/.ssh", "/home/u/.aws/credentials", "/home/u/.local/state/acp", "/home/u/.config/acp/", "relative/ignored"},
	}
	tests := []struct {
		name   string
		path   string
		access Access
		denied bool
	}{
		{name: "a key under the home root", path: "/home/u/.ssh/id_rsa", denied: true},
		{name: "the denied directory itself", path: "/home/u/.ssh", denied: true},
		{name: "written", path: "/home/u/.ssh/authorized_keys", access: AccessWrite, denied: true},
		{name: "a denied file", path: "/home/u/.aws/credentials", denied: true},
		{name: "beside a denied file", path: "/home/u/.aws/config"},
		{name: "prefix but not child", path: "/home/u/.sshx/id_rsa"},
		{name: "prefix of a denied file", path: "/home/u/.aws/credentials.bak"},
		{name: "dotdot into it", path: "/home/u/proj/../.ssh/id_rsa", denied: true},
		{name: "a dotless i where the name has an i (NTFS upper-cases it)", path: "/home/u/.conf\u0131g/acp/config.json", denied: true},
		{name: "the long s (folds to s)", path: "/home/u/.\u017fsh/id_rsa", denied: true},
		{name: "from a nested root's parent path", path: "/home/u/proj/x"},
		{name: "case variant", path: "/home/u/.SSH/id_rsa", denied: true},
		{name: "ignorable trailing dot", path: "/home/u/.ssh./id_rsa", denied: true},
		{name: "denied path given with a trailing slash", path: "/home/u/.config/acp/config.json", denied: true},
		{name: "the state dir's token", path: "/home/u/.local/state/acp/serve-token", denied: true},
		{name: "another session's file", path: "/home/u/.local/state/acp/sessions/s2.jsonl", denied: true},
		{name: "kept output in a root inside the state dir", path: "/home/u/.local/state/acp/sessions/s1/offloaded/1.out"},
		{name: "kept output root itself", path: "/home/u/.local/state/acp/sessions/s1/offloaded"},
		{name: "kept outputs stay read-only", path: "/home/u/.local/state/acp/sessions/s1/offloaded/1.out", access: AccessWrite, denied: true},
		{name: "beside the kept root, still denied", path: "/home/u/.local/state/acp/sessions/s1/checkpoints", denied: true},
		{name: "a workspace the user opened inside .ssh", path: "/home/u/.ssh/keys-ws/notes.txt"},
		{name: "writable there too", path: "/home/u/.ssh/keys-ws/notes.txt", access: AccessWrite},
		{name: "another root", path: "/srv/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := p.Resolve(tt.path, tt.access)
			if tt.denied {
				assert.ErrorIs(t, err, ErrPermissionDenied)
			} else {
				assert.NoError(t, err)
			}
		})
	}
	// A root inside a denied path holds its whole tree, and only its own.
	q := FS{Roots: []string{"/home/u/.ssh"}, DeniedPaths: []string{"/home/u/.ssh"}}
	_, _, err := q.Resolve("/home/u/.ssh/id_rsa", AccessRead)
	assert.NoError(t, err, "a workspace opened at a denied path is the user's choice")
	// Relative denied paths (a configuration error the caller prevents)
	// deny nothing rather than everything.
	_, _, err = p.Resolve("/home/u/relative/ignored", AccessRead)
	assert.NoError(t, err)
}

// TestChildrenByNameDeclinesDirectoriesHoldingADeniedPath: a walk resolves
// entry by entry where a denied path sits right below the directory, and
// judges by name elsewhere; where it judges by name, the name gives
// Resolve's answer.
func TestChildrenByNameDeclinesDirectoriesHoldingADeniedPath(t *testing.T) {
	skipOnWindows(t)
	p := FS{Roots: []string{"/home/u"}, DeniedPaths: []string{"/home/u/.ssh", "/home/u/.local/state/acp"}}
	assert.False(t, p.ChildrenByName("/home/u"))
	assert.False(t, p.ChildrenByName("/home/u/.local/state"))
	assert.False(t, p.ChildrenByName("/home/u/.LOCAL/state"), "case variants too")
	assert.True(t, p.ChildrenByName("/home/u/.local"))
	assert.True(t, p.ChildrenByName("/home/u/src"))
	for _, name := range []string{"a", ".sshx", "acpx"} {
		_, _, err := p.Resolve("/home/u/.local/"+name, AccessRead)
		assert.Equal(t, err == nil, ChildNameAllowed(name), name)
	}
}

// TestDeniedBelowFindsDeniedPathsInsideADirectory: a directory a command
// would list or walk holds a denied path when one lies strictly below it
// and Resolve refuses it there: the home directory and every directory
// on the way to ~/.ssh or the state directory do; a project directory, a
// sibling that only starts like one (~/.sshx), the kept outputs' root
// inside the state directory and a root opened at a denied path do not.
func TestDeniedBelowFindsDeniedPathsInsideADirectory(t *testing.T) {
	skipOnWindows(t)
	p := FS{
		Roots: []string{"/home/u", "/home/u/.local/state/acp/sessions/s1/offloaded", "/home/u/keys"},
		DeniedPaths: []string{"/home/u/.ssh", "/home/u/.local/state/acp", "/home/u/keys", "/home/u/.aws/credentials",
			"relative/ignored"},
	}
	tests := []struct {
		dir  string
		want string // the denied path found, "" for none
	}{
		{"/home/u", "/home/u/.ssh"},
		{"/home/u/", "/home/u/.ssh"},
		{"/home/u/proj/..", "/home/u/.ssh"},
		{"/HOME/U", "/home/u/.ssh"},
		{"/home", "/home/u/.ssh"},
		{"/", "/home/u/.ssh"},
		{"/home/u/.local", "/home/u/.local/state/acp"},
		{"/home/u/.local/state", "/home/u/.local/state/acp"},
		{"/home/u/.aws", "/home/u/.aws/credentials"},
		{"/home/u/proj", ""},
		{"/home/u/.sshx", ""},
		{"/home/u/.ssh", ""}, // the denied path itself is Resolve's to refuse
		{"/home/u/.local/state/acp/sessions/s1/offloaded", ""},
		{"/home/u/relative", ""},
	}
	for _, tt := range tests {
		d, found := p.DeniedBelow(tt.dir)
		assert.Equal(t, tt.want != "", found, tt.dir)
		assert.Equal(t, tt.want, d, tt.dir)
	}
	// ~/keys is a root of its own (the user opened it): not refused.
	q := FS{Roots: []string{"/home/u", "/home/u/keys"}, DeniedPaths: []string{"/home/u/keys"}}
	_, found := q.DeniedBelow("/home/u")
	assert.False(t, found, "a denied path the user opened as a root")
	_, found = p.DeniedBelow("relative/dir")
	assert.True(t, found, "a relative directory fails closed")
}

// BenchmarkResolveWithDeniedPaths is BenchmarkResolve with the list of
// denied paths a session gets with the home directory as its workspace
// (the credentials and the agent's own files, as given and resolved).
func BenchmarkResolveWithDeniedPaths(b *testing.B) {
	skipOnWindows(b)
	p := FS{Roots: []string{"/home/user", "/home/user/.local/state/acp-agent/sessions/s/offloaded"}, DeniedPathPrefixes: DefaultDeniedPrefixes()}
	for _, d := range []string{".ssh", ".aws", ".gnupg", ".netrc", ".config/gh", ".docker/config.json", ".config/gcloud", ".kube",
		".git-credentials", ".npmrc", ".pypirc", ".azure", ".config/acp-agent", ".local/state/acp-agent",
		".local/state/acp-agent/sessions", ".local/state/acp-agent/logs/agent.log"} {
		p.DeniedPaths = append(p.DeniedPaths, "/home/user/"+d)
	}
	paths := []string{
		"/home/user/project/internal/server/handler.go",
		"/home/user/.ssh/id_rsa",
		"/home/user/.local/state/acp-agent/sessions/s/offloaded/1.out",
		"/home/user/src/a/b/c.go",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p.Resolve(paths[i%len(paths)], AccessRead)
	}
}

// TestFSProtectedPaths: a protected path and what is below it are refused
// for writes (creating included) whatever root holds them, even a root
// opened inside one, with a hint in the message; reads are allowed; a
// name that only starts like one (~/.bashrc.bak) is not protected, and
// case variants are the same path.
func TestFSProtectedPaths(t *testing.T) {
	skipOnWindows(t)
	p := FS{
		Roots:          []string{"/home/u", "/home/u/.config/fish"},
		ProtectedPaths: []string{"/home/u/.bashrc", "/home/u/.config/git", "/home/u/.config/fish", "relative/ignored"},
	}
	tests := []struct {
		name    string
		path    string
		access  Access
		refused bool
	}{
		{name: "written", path: "/home/u/.bashrc", access: AccessWrite, refused: true},
		{name: "read", path: "/home/u/.bashrc"},
		{name: "created below a protected directory", path: "/home/u/.config/git/config", access: AccessWrite, refused: true},
		{name: "the directory itself", path: "/home/u/.config/git", access: AccessWrite, refused: true},
		{name: "read below it", path: "/home/u/.config/git/ignore"},
		{name: "a root inside one", path: "/home/u/.config/fish/config.fish", access: AccessWrite, refused: true},
		{name: "prefix but not the file", path: "/home/u/.bashrc.bak", access: AccessWrite},
		{name: "case variant", path: "/home/u/.BASHRC", access: AccessWrite, refused: true},
		{name: "dotdot into it", path: "/home/u/proj/../.bashrc", access: AccessWrite, refused: true},
		{name: "an ordinary file", path: "/home/u/notes.txt", access: AccessWrite},
		{name: "relative entries protect nothing", path: "/home/u/relative/ignored", access: AccessWrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := p.Resolve(tt.path, tt.access)
			if !tt.refused {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ErrPermissionDenied)
			assert.Contains(t, err.Error(), "protected start-up or configuration file")
		})
	}
}
