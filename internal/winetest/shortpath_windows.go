package winetest

import (
	"strings"

	"golang.org/x/sys/windows"
)

// ShortPath is the existing path p in the 8.3 spelling its volume gives
// it (NTFS's C:\PROGRA~1, Wine's _ENV~3EE: tests attack with what the
// volume really answers to), or "" where there is none other than p (8.3
// names turned off, ReFS, a name that is 8.3 already).
func ShortPath(p string) string {
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return ""
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetShortPathName(u, &buf[0], uint32(len(buf)))
	if err != nil || n == 0 || int(n) > len(buf) {
		return ""
	}
	if s := windows.UTF16ToString(buf[:n]); !strings.EqualFold(s, p) {
		return s
	}
	return ""
}
