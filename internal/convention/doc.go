// Package convention holds only tests: they check the repository's
// OS-file convention (docs/platforms.md) on every file of the tree.
package convention
