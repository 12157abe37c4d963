package scratch

import (
	"io/fs"
	"os"
)

// canLock: directories cannot be locked here, so RemoveStale cannot tell
// a live agent's directory from a dead one's and does nothing. There is
// no sandbox on Windows, so no command TMPDIR is made either.
const canLock = false

func lockDir(string) (*os.File, error)    { return nil, nil }
func tryLockDir(string) (*os.File, error) { return nil, nil }
func unlock(*os.File)                     {}
func ownedByMe(fs.FileInfo) bool          { return false }
