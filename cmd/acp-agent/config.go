package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/prompts"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
)

// fileConfig is the config file (docs/configuration.md). Every member is
// optional; flags and environment variables override it.
type fileConfig struct {
	Model          string      `json:"model"`
	Models         []fileModel `json:"models"`
	MaxRetries     *int        `json:"maxRetries"`
	PromptTimeout  string      `json:"promptTimeout"`
	ExecutionState *bool       `json:"executionState"`
	DiscoverModels *bool       `json:"discoverModels"`
	LogLevel       string      `json:"logLevel"`
	LogFile        string      `json:"logFile"`
	ModelsFile     string      `json:"modelsFile"`
	TelemetryFile  string      `json:"telemetryFile"`
	Mode           string      `json:"mode"`
	Permission     string      `json:"permission"`
	// Workspace rules of the built-in tools.
	AllowedCommands    []string `json:"allowedCommands"`
	DeniedCommands     []string `json:"deniedCommands"`
	ReadOnlyRoots      []string `json:"readOnlyRoots"`
	DeniedPathPrefixes []string `json:"deniedPathPrefixes"`
	CommandTimeout     string   `json:"commandTimeout"`
	MaxCommandRuntime  string   `json:"maxCommandRuntime"`
	SessionDir         string   `json:"sessionDir"`
	StopHooks          []string `json:"stopHooks"`
	ModelTitles        *bool    `json:"modelTitles"`
	Resize             *struct {
		MaxMessagesTextLength int `json:"maxMessagesTextLength"`
		MaxKeepMessagesCount  int `json:"maxKeepMessagesCount"`
		EveryNTurns           int `json:"everyNTurns"`
	} `json:"resize"`
	OffloadThreshold int `json:"offloadThreshold"`
	// Hooks are shell commands at events (hooks.go in package agent).
	Hooks *agent.HooksSpec `json:"hooks"`
	// RulesFiles false leaves AGENTS.md (CLAUDE.md, GEMINI.md) out of the
	// context.
	RulesFiles *bool `json:"rulesFiles"`
	// Sandbox of local commands (sandbox.go).
	Sandbox *sandboxFile `json:"sandbox"`
	// Shell runs run_command's lines on Windows: pwsh, powershell or cmd
	// (tools.CheckShell); unset: pwsh where installed, else powershell.
	Shell string `json:"shell"`
	// Caps of one streamed model response (limits.go).
	MaxToolArgumentBytes *int `json:"maxToolArgumentBytes"`
	MaxResponseTextBytes *int `json:"maxResponseTextBytes"`

	promptTimeout, commandTimeout, maxCommandRuntime time.Duration // parsed
}

type fileModel struct {
	Model         string   `json:"model"`
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	BaseURL       string   `json:"baseUrl"`
	APIKeyEnv     string   `json:"apiKeyEnv"`
	ThoughtLevels []string `json:"thoughtLevels"`
	ThoughtLevel  string   `json:"thoughtLevel"`
}

var (
	configKeys = []string{"model", "models", "maxRetries", "promptTimeout", "executionState", "logLevel", "logFile", "modelsFile", "telemetryFile",
		"mode", "permission", "allowedCommands", "deniedCommands", "readOnlyRoots", "deniedPathPrefixes", "commandTimeout", "maxCommandRuntime", "sessionDir", "stopHooks", "offloadThreshold", "modelTitles", "resize",
		"maxToolArgumentBytes", "maxResponseTextBytes", "sandbox", "rulesFiles", "hooks", "discoverModels", "shell"}
	modelKeys = []string{"model", "name", "description", "baseUrl", "apiKeyEnv", "thoughtLevels", "thoughtLevel"}
)

// defaultConfigPath is $XDG_CONFIG_HOME/acp-agent/config.json, or on
// Windows %APPDATA%\acp-agent\config.json, or
// ~/.config/acp-agent/config.json; "" when none can be found.
func defaultConfigPath(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if a := getenv("APPDATA"); dir == "" && a != "" && onWindows {
		dir = a // Windows: %APPDATA%\acp-agent\config.json
	}
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "acp-agent", "config.json")
}

// loadConfig reads the config file at path. A file named explicitly must
// exist; the default one is optional (a missing one is an empty config).
func loadConfig(path string, explicit bool) (*fileConfig, error) {
	if path == "" {
		return &fileConfig{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return &fileConfig{}, nil
		}
		return nil, fmt.Errorf("config file: %w", err)
	}
	cfg, err := parseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return cfg, nil
}

// parseConfig is strict: an unknown or misspelt member is an error, so a
// typo never silently drops a setting.
func parseConfig(data []byte) (*fileConfig, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, describeJSON(data, err)
	}
	if err := checkKeys(top, configKeys, ""); err != nil {
		return nil, err
	}
	var models []map[string]json.RawMessage
	if raw, ok := top["models"]; ok {
		if err := json.Unmarshal(raw, &models); err != nil {
			return nil, fmt.Errorf(`"models" must be an array of objects: %v`, err)
		}
		for i, m := range models {
			if err := checkKeys(m, modelKeys, fmt.Sprintf(" in models[%d]", i)); err != nil {
				return nil, err
			}
		}
	}
	var cfg fileConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&cfg); err != nil {
		return nil, describeJSON(data, err)
	}
	for i, m := range cfg.Models {
		if _, err := agent.ParseModelSpec(m.Model); err != nil {
			return nil, fmt.Errorf("models[%d]: %w", i, err)
		}
	}
	if cfg.Model != "" {
		if _, err := agent.ParseModelSpec(cfg.Model); err != nil {
			return nil, fmt.Errorf(`"model": %w`, err)
		}
	}
	for _, d := range []struct {
		name string
		text string
		dst  *time.Duration
	}{
		{"promptTimeout", cfg.PromptTimeout, &cfg.promptTimeout},
		{"commandTimeout", cfg.CommandTimeout, &cfg.commandTimeout},
		{"maxCommandRuntime", cfg.MaxCommandRuntime, &cfg.maxCommandRuntime},
	} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil || v < 0 {
			return nil, fmt.Errorf(`%q %q must be a duration such as "10m" or "90s"`, d.name, d.text)
		}
		*d.dst = v
	}
	if cfg.Mode != "" {
		if _, err := policy.ParseMode(cfg.Mode); err != nil {
			return nil, fmt.Errorf(`"mode": %w`, err)
		}
	}
	if cfg.Permission != "" {
		if _, err := policy.ParsePolicyMode(cfg.Permission); err != nil {
			return nil, fmt.Errorf(`"permission": %w`, err)
		}
	}
	for _, r := range cfg.ReadOnlyRoots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf(`"readOnlyRoots": %q is not an absolute path`, r)
		}
	}
	if err := cfg.checkStreamLimits(); err != nil {
		return nil, err
	}
	if err := tools.CheckShell(cfg.Shell); err != nil {
		return nil, fmt.Errorf(`"shell": %w`, err)
	}
	if cfg.MaxRetries != nil && *cfg.MaxRetries < 0 {
		return nil, fmt.Errorf(`"maxRetries" must not be negative, got %d`, *cfg.MaxRetries)
	}
	return &cfg, nil
}

// checkKeys rejects members not exactly in names (encoding/json would
// match "ModelS" to "models" case-insensitively).
func checkKeys(obj map[string]json.RawMessage, names []string, where string) error {
	var unknown []string
	for k := range obj {
		if !slices.Contains(names, k) {
			hint := ""
			for _, n := range names {
				if strings.EqualFold(n, k) {
					hint = fmt.Sprintf(" (did you mean %q? names are case-sensitive)", n)
				}
			}
			unknown = append(unknown, fmt.Sprintf("%q%s", k, hint))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("unknown member %s%s; known members are %s", strings.Join(unknown, ", "), where, strings.Join(names, ", "))
}

// describeJSON names the line and column of a syntax error.
func describeJSON(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset is just past the offending byte.
		off := max(se.Offset-1, 0)
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		col := int(off) - bytes.LastIndexByte(data[:off], '\n')
		return fmt.Errorf("line %d, column %d: %v", line, col, err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%q: expected %s, got JSON %s", te.Field, te.Type, te.Value)
	}
	return err
}

// workspace is the built-in tools' rules from the file.
func (c *fileConfig) workspace() tools.WorkspaceConfig {
	return tools.WorkspaceConfig{
		ReadOnlyRoots: c.ReadOnlyRoots, DeniedPathPrefixes: c.DeniedPathPrefixes,
		Terminal:       policy.Terminal{AllowedCommands: c.AllowedCommands, DeniedCommands: c.DeniedCommands, MaxRuntime: c.maxCommandRuntime},
		CommandTimeout: c.commandTimeout,
		NoRules:        c.RulesFiles != nil && !*c.RulesFiles,
		Shell:          c.Shell,
	}
}

// hooksTrustFile is where the trusted project hook files are remembered:
// beside the sessions, in the state directory.
func hooksTrustFile(getenv func(string) string) string {
	dir := persistence.DefaultDir(getenv)
	if dir == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(dir), "trusted-hooks.json")
}

// userPromptDirs are the user's own command and skill directories: beside
// the default config file, and under ~/.claude and ~/.agents.
func userPromptDirs(getenv func(string) string) prompts.Dirs {
	configDir := ""
	if p := defaultConfigPath(getenv); p != "" {
		configDir = filepath.Dir(p)
	}
	return prompts.UserDirs(configDir, getenv("HOME"))
}

// userRulesPath is the user's own rules file: AGENTS.md beside the
// default config file; "" when there is no config directory.
func userRulesPath(getenv func(string) string) string {
	p := defaultConfigPath(getenv)
	if p == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(p), "AGENTS.md")
}

// choices turns the file's model list into the agent's.
func (c *fileConfig) choices() []acpagent.ModelChoice {
	var out []acpagent.ModelChoice
	for _, m := range c.Models {
		out = append(out, acpagent.ModelChoice{
			Spec: m.Model, Name: m.Name, Description: m.Description, BaseURL: m.BaseURL,
			APIKeyEnv: m.APIKeyEnv, ThoughtLevels: m.ThoughtLevels, ThoughtLevel: m.ThoughtLevel,
		})
	}
	return out
}
