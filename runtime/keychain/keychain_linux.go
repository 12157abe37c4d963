package keychain

import (
	"os"
	"os/exec"
	"strings"
)

// secretTool is the Secret Service through libsecret's secret-tool.
type secretTool struct{ path string }

func defaultStore() Store {
	p, err := exec.LookPath("secret-tool")
	if err != nil || os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return nil
	}
	return secretTool{path: p}
}

func (s secretTool) Name() string { return "the Secret Service (secret-tool)" }

func (s secretTool) Set(service, account, secret string) error {
	if err := validSecret(secret); err != nil {
		return err
	}
	_, err := run(secret, s.path, "store", "--label="+service+" "+account, "service", service, "account", account)
	return err
}

func (s secretTool) Get(service, account string) (string, error) {
	out, err := run("", s.path, "lookup", "service", service, "account", account)
	if err != nil || out == "" {
		return "", ErrNotFound
	}
	return strings.TrimRight(out, "\n"), nil
}

func (s secretTool) Delete(service, account string) error {
	_, err := run("", s.path, "clear", "service", service, "account", account)
	return err
}
