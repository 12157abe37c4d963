package keychain

import (
	"fmt"
	"os"
	"strings"
)

const (
	security = "/usr/bin/security"
)

// macKeychain is the user's login keychain through security(1). The
// secret goes to security's interactive mode on its standard input, so
// it never appears on a command line other processes can read.
type macKeychain struct{}

func defaultStore() Store {
	if _, err := os.Stat(security); err != nil {
		return nil
	}
	return macKeychain{}
}

func (macKeychain) Name() string { return "the macOS keychain" }

// quote is a security -i argument in double quotes (Set refuses what
// would need escaping).
func quote(s string) string { return `"` + s + `"` }

func (macKeychain) Set(service, account, secret string) error {
	if err := validSecret(secret); err != nil {
		return err
	}
	if strings.ContainsAny(service+account+secret, `"\`) {
		return fmt.Errorf("keychain: quotes and backslashes cannot go through security -i")
	}
	line := fmt.Sprintf("add-generic-password -U -s %s -a %s -w %s\n", quote(service), quote(account), quote(secret))
	_, err := run(line, security, "-i")
	return err
}

func (macKeychain) Get(service, account string) (string, error) {
	out, err := run("", security, "find-generic-password", "-s", service, "-a", account, "-w")
	if err != nil {
		return "", ErrNotFound
	}
	return strings.TrimRight(out, "\n"), nil
}

func (macKeychain) Delete(service, account string) error {
	_, err := run("", security, "delete-generic-password", "-s", service, "-a", account)
	return err
}
