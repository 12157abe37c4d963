// Package convention holds only tests: they check the repository's
// OS-file convention (docs/platforms.md) on every file of the tree, and
// that the binary links no module kept for tests only.
package convention
