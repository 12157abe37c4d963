//go:build !windows

package sandbox

// osProtectedPaths has nothing to add outside Windows: the start-up
// files of Unix shells, desktops and tools are DefaultProtectedPaths'
// own list.
func osProtectedPaths(home, pathList string) []string { return nil }
