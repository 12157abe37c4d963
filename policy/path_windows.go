package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultPath is the fixed search path of command names when the caller
// does not supply one: Windows' own directories and the standard install
// directories of PowerShell 7 and Git, from the system's environment (the
// agent's, never the model's). Set when the package loads.
var DefaultPath = windowsDefaultPath(os.Getenv)

func windowsDefaultPath(getenv func(string) string) string {
	root := getenv("SystemRoot")
	if root == "" || !filepath.IsAbs(root) {
		root = `C:\Windows`
	}
	programs := getenv("ProgramFiles")
	if programs == "" || !filepath.IsAbs(programs) {
		programs = `C:\Program Files`
	}
	return strings.Join([]string{
		filepath.Join(root, "System32"), root,
		filepath.Join(root, `System32\WindowsPowerShell\v1.0`),
		filepath.Join(programs, `PowerShell\7`),
		filepath.Join(programs, `Git\cmd`),
	}, ";")
}

// hasPathSeparator reports whether name is a path rather than a name to
// search for: a slash, a backslash or a drive letter ("C:x") makes it
// one.
func hasPathSeparator(name string) bool {
	return strings.ContainsAny(name, `/\:`)
}

// executableExts are what Windows runs without being told the
// extension, in PATHEXT's usual order; only these count as programs.
var executableExts = []string{".com", ".exe", ".bat", ".cmd"}

// executableNames are the files name may be: itself when it has one of
// executableExts, else name with each of them appended.
func executableNames(name string) []string {
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range executableExts {
		if ext == e {
			return []string{name}
		}
	}
	out := make([]string, len(executableExts))
	for i, e := range executableExts {
		out[i] = name + e
	}
	return out
}

// isExecutable: a regular file with a program extension (Windows has no
// execute bit).
func isExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || len(executableNames(path)) != 1 {
		return fmt.Errorf("%s: not an executable file: %w", path, os.ErrPermission)
	}
	return nil
}

// envNameKey is how environment variable names compare on Windows:
// case-insensitively ("Path" is PATH).
func envNameKey(name string) string { return strings.ToUpper(name) }
