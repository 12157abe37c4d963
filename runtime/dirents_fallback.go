//go:build !linux

package runtime

import (
	"io/fs"
	"os"
	"path/filepath"
)

// readStartDir lists a walk's start directory.
func readStartDir(f *os.File) ([]fs.DirEntry, error) { return f.ReadDir(-1) }

// openListedDir opens the subdirectory e through its parent's Root, as
// "name/." (an intermediate component, with O_DIRECTORY, so a FIFO
// swapped in cannot block), and lists it if it is the directory listed.
func openListedDir(e entry) (*dirHandle, []fs.DirEntry, bool) {
	sub, err := e.dir.root.OpenRoot(e.d.Name() + string(filepath.Separator) + ".")
	if err != nil {
		return nil, nil, false
	}
	f, err := sub.OpenFile(".", openReadFlags, 0)
	if err != nil {
		sub.Close()
		return nil, nil, false
	}
	closeBoth := func() { f.Close(); sub.Close() }
	fi, err := f.Stat()
	if err != nil || !sameAsListed(fi, e) {
		closeBoth()
		return nil, nil, false
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		closeBoth()
		return nil, nil, false
	}
	h := &dirHandle{fd: int(f.Fd()), root: sub, close: closeBoth}
	h.refs.Store(1)
	return h, entries, true
}

// sameAsListed reports whether fi, of what was opened at e's name, is
// the file the listing showed for e. Where the listing carries no file
// identity (Windows on FAT, SMB or Wine lists files without their index),
// the entry is looked at again without following a link: it must still
// be of the listed type and the very file opened.
func sameAsListed(fi fs.FileInfo, e entry) bool {
	listed, err := e.d.Info()
	if err == nil && os.SameFile(fi, listed) {
		return true
	}
	if e.dir.root == nil {
		return false
	}
	again, err := e.dir.root.Lstat(e.d.Name())
	return err == nil && again.Mode().Type() == e.d.Type() && os.SameFile(fi, again)
}
