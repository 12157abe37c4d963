//go:build !windows

package main

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ownedByThisUser refuses a file another user owns: that user could have
// written it (a token they know) or could still change it.
func ownedByThisUser(info fs.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("owned by uid %d, not by this user (uid %d), who could know or change the token: remove it (serve makes a new one) or chown it", st.Uid, uid)
	}
	return nil
}
