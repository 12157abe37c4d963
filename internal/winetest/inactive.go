//go:build !(windows && winetest)

package winetest

// Active is false outside the Wine test build.
const Active = false

// startFailed: outside Wine no error is a transient failure to start.
func startFailed(error) bool { return false }
