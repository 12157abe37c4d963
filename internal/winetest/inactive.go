//go:build !(windows && winetest)

package winetest

// Active is false outside the Wine test build.
const Active = false
