package sandbox

import (
	"path/filepath"

	"golang.org/x/sys/windows/registry"
)

// osProtectedPaths are Windows' own start-up places under home that the
// user's programs run unconfined: the Startup folder (every file in it
// runs at the next sign-in), PowerShell's profile and module directories
// (profile.ps1 runs when the user's next PowerShell starts, and a module
// there named like a command runs instead of it), each at its default
// place and where the user's shell folders put it (Documents redirected
// to OneDrive); and every entry of pathList under home\AppData or
// home\scoop, at any depth (per-user installs:
// %LOCALAPPDATA%\Programs\Python\Python312, %APPDATA%\npm, Scoop's shims:
// a program written there runs instead of the user's the next time its
// name is looked up; projects do not live there).
func osProtectedPaths(home, pathList string) []string {
	out := []string{
		filepath.Join(home, `AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup`),
		filepath.Join(home, `Documents\PowerShell`),
		filepath.Join(home, `Documents\WindowsPowerShell`),
	}
	if p := userShellFolder("Startup"); p != "" {
		out = append(out, p)
	}
	if p := userShellFolder("Personal"); p != "" { // Documents
		out = append(out, filepath.Join(p, "PowerShell"), filepath.Join(p, "WindowsPowerShell"))
	}
	for _, e := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(e) {
			continue
		}
		e = filepath.Clean(e)
		for _, d := range []string{"AppData", "scoop"} {
			if rel, err := filepath.Rel(filepath.Join(home, d), e); err == nil && rel != "." && filepath.IsLocal(rel) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// userShellFolder is the folder the user's shell keeps under name
// (HKCU's User Shell Folders: "Personal" is Documents, "Startup" the
// Startup folder), its %VARIABLES% expanded, or "". The registry, not
// SHGetKnownFolderPath, so that the agent's start does not load shell32.
func userShellFolder(name string) string {
	k, err := registry.OpenKey(registry.CURRENT_USER, `Software\Microsoft\Windows\CurrentVersion\Explorer\User Shell Folders`, registry.QUERY_VALUE)
	if err != nil {
		return ""
	}
	defer k.Close()
	v, _, err := k.GetStringValue(name)
	if err != nil {
		return ""
	}
	if x, err := registry.ExpandString(v); err == nil {
		v = x
	}
	if !filepath.IsAbs(v) {
		return ""
	}
	return filepath.Clean(v)
}
