//go:build windows && winetest

package winetest

import (
	"errors"
	_ "unsafe" // go:linkname

	"golang.org/x/sys/windows"
)

// Active: this is a Windows test binary built for Wine.
const Active = true

// Wine 8 answers FileDispositionInformationEx (the POSIX-semantics delete
// os.Root.Remove and os.RemoveAll use since Go 1.24) with
// STATUS_NOT_IMPLEMENTED, a status Go does not fall back on; Windows 10
// and later implement it. This turns on the fallback Go keeps for older
// Windows and FAT volumes (plain FileDispositionInfo), so that deletions
// and t.TempDir's cleanup work under Wine. Linking to an internal symbol
// needs -ldflags=-checklinkname=0, which only the Wine test build passes.
//
//go:linkname deleteatFallback internal/syscall/windows.TestDeleteatFallback
var deleteatFallback bool

func init() { deleteatFallback = true }

// startFailed: Wine's CreateProcess reports STATUS_INTERNAL_ERROR when
// the new process exits before it has told wineserver it started (Wine 8,
// ntdll's NtCreateUserProcess), which happens on a loaded machine and
// not again on the next try. Windows does not fail so.
func startFailed(err error) bool { return errors.Is(err, windows.ERROR_INTERNAL_ERROR) }
