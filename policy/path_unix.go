//go:build unix

package policy

import (
	"fmt"
	"os"
	"strings"
)

// DefaultPath is the fixed PATH used to resolve command names when the
// caller does not supply one. It deliberately ignores the agent's own PATH:
// a PATH the model can influence (a repo-local bin/, ".", a shim directory)
// would let it choose which binary "git" is.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// hasPathSeparator reports whether name is a path rather than a name to
// search for.
func hasPathSeparator(name string) bool { return strings.Contains(name, "/") }

// executableNames are the files name may be: itself.
func executableNames(name string) []string { return []string{name} }

func isExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s: not an executable file: %w", path, os.ErrPermission)
	}
	return nil
}

// envNameKey is how environment variable names compare: exactly.
func envNameKey(name string) string { return name }
