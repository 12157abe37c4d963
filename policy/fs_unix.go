//go:build unix

package policy

// CanonicalPath spells a path the way the policy compares paths: as it
// is on Unix (Windows drops \\?\ prefixes).
func CanonicalPath(p string) string { return p }

// osDeniedName is false: Unix has no second name for a file the way
// NTFS short names are.
func osDeniedName(string) bool { return false }
