//go:build !unix

package runtime

import (
	"io/fs"
	"os"
)

const openReadFlags = os.O_RDONLY

// linkCount is 1 where FileInfo does not carry a link count (Windows
// needs GetFileInformationByHandle); hard-link refusals do not apply there.
func linkCount(fs.FileInfo) uint64 { return 1 }
