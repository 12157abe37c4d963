//go:build !linux

package runtime

import "os"

// fdPath has no kernel source outside Linux yet (darwin's F_GETPATH would
// need golang.org/x/sys), so LocalFS uses its portable check:
// EvalSymlinks of the lexical path, accepted only if os.SameFile matches
// the descriptor.
func fdPath(*os.File) (string, bool) { return "", false }
