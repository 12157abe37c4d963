// Package keychain keeps secrets (provider API keys) in the operating
// system's credential store:
//
//   - macOS: the login keychain, through /usr/bin/security (the secret
//     is written on its standard input, never on a command line);
//   - Linux: the Secret Service (GNOME Keyring, KWallet) through
//     secret-tool, where it is installed and a D-Bus session is running;
//   - Windows: the Credential Manager (CredWriteW, CredReadW).
//
// Default returns nil where no store is reachable; callers then keep the
// secret in a file only the user can read. Functions are safe for
// concurrent use; each call is one round trip to the store.
package keychain

import (
	"errors"
	"time"
)

// ErrNotFound is what Get returns when the store has no such secret.
var ErrNotFound = errors.New("keychain: no such secret")

// Store is an OS credential store. Secrets are found by service and
// account.
type Store interface {
	// Name says where secrets go ("the macOS keychain").
	Name() string
	Set(service, account, secret string) error
	Get(service, account string) (string, error)
	Delete(service, account string) error
}

// timeout bounds each call to a store's helper program (a locked
// keychain that shows a dialog must not hang the agent's start).
const timeout = 10 * time.Second

// Default is this system's store, or nil where none is reachable.
func Default() Store { return defaultStore() }

// validSecret refuses what no store can hold faithfully: empty, very
// long, or with control characters.
func validSecret(s string) error {
	if s == "" || len(s) > 4096 {
		return errors.New("keychain: a secret must be 1 to 4096 bytes")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return errors.New("keychain: a secret must not contain control characters")
		}
	}
	return nil
}
