package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/anthropic"
	"github.com/acp-agent/acp-agent/agent/llm/openai"
	"github.com/acp-agent/acp-agent/runtime/keychain"
	"github.com/acp-agent/acp-agent/runtime/term"
)

// credentialsFile is beside the config file: which provider `acp-agent
// login` set up, and where its key is (the OS keychain, or this file).
type credentialsFile struct {
	Provider string `json:"provider"`
	BaseURL  string `json:"baseUrl,omitempty"`
	Model    string `json:"model,omitempty"`
	// Storage is "keychain" (Key is in the OS store) or "file" (Key is
	// here; the file is 0600).
	Storage string `json:"storage"`
	Key     string `json:"key,omitempty"`
}

// keychainService names acp-agent's entries in the OS store; the account
// is the provider.
const keychainService = "acp-agent"

// loginProviders are what login sets up: the environment names of the
// key and base URL the agent reads, the default API base and the model
// to use when none is configured.
var loginProviders = map[string]struct{ keyEnv, urlEnv, base, model string }{
	"openai":    {"OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1", ""},
	"anthropic": {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "https://api.anthropic.com", "anthropic/claude-sonnet-4-5"},
}

func credentialsPath(getenv func(string) string) string {
	p := defaultConfigPath(getenv)
	if p == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(p), "credentials.json")
}

// runLogin is `acp-agent login`: the terminal set-up an editor runs for
// the ACP "terminal" auth method. It asks for the provider and the key
// (not echoed), checks the key with one request to the provider, and
// stores it in the OS keychain where there is one, else in a 0600 file in
// the config directory.
func runLogin(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string, getenv func(string) string) error {
	fs := flag.NewFlagSet("acp-agent login", flag.ContinueOnError)
	provider := fs.String("provider", "", "openai or anthropic (asked when not given)")
	baseURL := fs.String("base-url", "", "the provider's API base URL, for a compatible server (default: the provider's)")
	model := fs.String("model", "", "model to use by default, PROVIDER/MODEL (default: the provider's)")
	noKeychain := fs.Bool("no-keychain", false, "keep the key in the config directory's credentials file, not the OS keychain")
	if err := parseFlags(fs, "acp-agent login", args, stdout, stderr); err != nil {
		return err
	}
	path := credentialsPath(getenv)
	if path == "" {
		return errors.New("login: no config directory (set HOME, or XDG_CONFIG_HOME)")
	}
	in := bufio.NewReader(stdin)
	if *provider == "" {
		fmt.Fprint(stdout, "Provider (openai, anthropic) [openai]: ")
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return fmt.Errorf("login: %w", err)
		}
		*provider = strings.TrimSpace(line)
		if *provider == "" {
			*provider = "openai"
		}
	}
	p, ok := loginProviders[*provider]
	if !ok {
		return fmt.Errorf("login: unknown provider %q: openai or anthropic", *provider)
	}
	fmt.Fprintf(stdout, "API key for %s: ", *provider)
	var key string
	var err error
	if f, isFile := stdin.(*os.File); isFile && in.Buffered() == 0 {
		key, err = term.ReadSecret(f) // not echoed on a terminal
		fmt.Fprintln(stdout)
	} else {
		key, err = in.ReadString('\n')
		if err == io.EOF && key != "" {
			err = nil
		}
	}
	key = strings.TrimSpace(key)
	if err != nil || key == "" {
		return errors.New("login: no key given")
	}
	base := strings.TrimSuffix(cmpOr(*baseURL, p.base), "/")
	fmt.Fprintf(stdout, "Checking the key with %s ... ", base)
	n, err := checkKey(ctx, *provider, base, key)
	if err != nil {
		fmt.Fprintln(stdout, "failed")
		return fmt.Errorf("login: the key was not stored: %w", err)
	}
	fmt.Fprintf(stdout, "it works (%d models).\n", n)

	cred := credentialsFile{Provider: *provider, BaseURL: *baseURL, Model: cmpOr(*model, p.model), Storage: "file"}
	where := path
	if store := keychain.Default(); store != nil && !*noKeychain {
		if err := store.Set(keychainService, *provider, key); err == nil {
			cred.Storage, where = "keychain", store.Name()
		} else {
			fmt.Fprintf(stderr, "acp-agent login: %s refused the key (%v); keeping it in %s\n", store.Name(), err, path)
		}
	}
	if cred.Storage == "file" {
		cred.Key = key
	}
	if err := writeCredentials(path, cred); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	fmt.Fprintf(stdout, "The %s key is stored in %s. Restart the agent (or reconnect the editor) to use it.\n", *provider, where)
	return nil
}

// terminalLogin is the terminal auth method's command: this binary with
// "login".
func terminalLogin() *acpagent.TerminalLogin {
	exe, err := os.Executable()
	if err != nil {
		exe = "acp-agent"
	}
	return &acpagent.TerminalLogin{Args: []string{"login"}, Command: exe}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// checkKey lists the provider's models with key, through the same
// client the agent uses: the cheapest request that proves the key is
// accepted. It returns how many models came back.
func checkKey(ctx context.Context, provider, base, key string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var lister interface {
		ListModels(context.Context) ([]llm.ServerModel, error)
	}
	if provider == "anthropic" {
		lister = anthropic.New(anthropic.Config{BaseURL: base, APIKey: key})
	} else {
		lister = openai.New(openai.Config{BaseURL: base, APIKey: key})
	}
	models, err := lister.ListModels(ctx)
	return len(models), err
}

// writeCredentials writes the file 0600 in a 0700 directory, replacing
// it atomically.
func writeCredentials(path string, c credentialsFile) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".credentials-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// withCredentials is getenv with what `acp-agent login` stored filling
// in the provider's key, base URL and default model where the
// environment does not set them. The environment always wins. The file
// is read on the first lookup, the keychain only when the key is asked
// for.
func withCredentials(getenv func(string) string) func(string) string {
	var once sync.Once
	var cred *credentialsFile
	var keyOnce sync.Once
	var key string
	load := func() {
		path := credentialsPath(getenv)
		if path == "" {
			return
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return
		}
		var c credentialsFile
		if json.Unmarshal(data, &c) == nil {
			if _, ok := loginProviders[c.Provider]; ok {
				cred = &c
			}
		}
	}
	return func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		once.Do(load)
		if cred == nil {
			return ""
		}
		p := loginProviders[cred.Provider]
		switch name {
		case p.keyEnv:
			keyOnce.Do(func() {
				key = cred.Key
				if cred.Storage == "keychain" {
					if store := keychain.Default(); store != nil {
						key, _ = store.Get(keychainService, cred.Provider)
					}
				}
			})
			return key
		case p.urlEnv:
			return cred.BaseURL
		case "ACP_AGENT_MODEL":
			return cred.Model
		}
		return ""
	}
}
