//go:build linux || darwin

package runtime

import "golang.org/x/sys/unix"

// stampOf reads Linux's and macOS's Stat_t (Mtim, Ctim; the release
// targets), other unixes take the fallback.
func stampOf(path string) (Stamp, bool) {
	var st unix.Stat_t
	for {
		err := unix.Lstat(path, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return Stamp{}, false
		}
		return Stamp{Size: st.Size, MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano(), Ino: st.Ino, Mode: uint32(st.Mode)}, true
	}
}

// stampAt is stampOf for the entry name of the open directory dirfd
// (path is its path, unused here).
func stampAt(dirfd int, name, path string) (Stamp, bool) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return Stamp{}, false
		}
		return Stamp{Size: st.Size, MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano(), Ino: st.Ino, Mode: uint32(st.Mode)}, true
	}
}
