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

// readEntry reads the walked file e through its parent Root, if it is
// the file the listing showed and a readable one.
func (w *walk) readEntry(e entry, buf *[]byte) ([]byte, bool) {
	f, err := e.dir.root.OpenFile(e.d.Name(), openReadFlags, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !sameAsListed(fi, e.d) || w.f.checkReadable(fi, w.abs(e.rel)) != nil {
		return nil, false
	}
	data, err := w.f.readStat(f, fi, w.abs(e.rel))
	if err != nil {
		return nil, false
	}
	*buf = data
	return data, true
}

const noFollowFlag = 0

// readAt is not available here: walks see no ignore files inside them.
func readAt(int, string) ([]byte, bool) { return nil, false }
