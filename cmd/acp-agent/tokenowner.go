package main

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/acp-agent/acp-agent/runtime"
)

// ownedByThisUser refuses a file another user owns: that user could have
// written it (a token they know) or could still change it. On Windows
// the folder's ACL keeps the token file private (loadOrCreateToken), and
// a file carries no uid.
func ownedByThisUser(info fs.FileInfo) error {
	owner, ok := runtime.FileOwner(info)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); owner != uid {
		return fmt.Errorf("owned by uid %d, not by this user (uid %d), who could know or change the token: remove it (serve makes a new one) or chown it", owner, uid)
	}
	return nil
}
