//go:build winetest

package main

// The agent binary the Wine tests run is built with -tags winetest:
// Wine lacks the POSIX-semantics delete Go uses (internal/winetest).
// Release builds never have this tag.
import _ "github.com/acp-agent/acp-agent/internal/winetest"
