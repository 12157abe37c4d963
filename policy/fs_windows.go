package policy

import (
	"strings"
)

// CanonicalPath spells a path the way the policy compares paths. On
// Windows: the \\?\ prefix editors and tools pass for long paths
// is dropped (\\?\C:\w is C:\w, \\?\UNC\host\share is \\host\share), so
// a root given one way contains paths given the other way. Other device
// paths (\\.\, \\?\Volume{...}) are kept: they are inside no root.
func CanonicalPath(p string) string {
	switch {
	case len(p) >= 6 && strings.HasPrefix(p, `\\?\`) && isDriveLetter(p[4]) && p[5] == ':':
		return p[4:]
	case len(p) >= 8 && strings.HasPrefix(p, `\\?\`) && strings.EqualFold(p[4:8], `UNC\`):
		return `\\` + p[8:]
	}
	return p
}

func isDriveLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// osDeniedName refuses what looks like an 8.3 short name ("GIT~1",
// "ENV~1.LOC"): NTFS gives .git, .env and every other long name one, and
// opening the short name opens the file, so no name rule can hold
// without it (git refuses "git~1" for the same reason). A real file
// named like that cannot be reached on Windows.
func osDeniedName(c string) bool {
	base, ext, _ := strings.Cut(c, ".")
	i := strings.IndexByte(base, '~')
	if i < 1 || i > 6 || i == len(base)-1 || len(ext) > 3 || strings.Contains(ext, ".") {
		return false
	}
	for _, d := range base[i+1:] {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}
