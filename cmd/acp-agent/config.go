package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/prompts"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/telemetry"
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
	// Terminal is the environment of commands (cmdpath.go).
	Terminal *terminalFile `json:"terminal"`
	// Shell runs run_command's lines on Windows: pwsh, powershell or cmd
	// (tools.CheckShell); unset: pwsh where installed, else powershell, else cmd.
	Shell string `json:"shell"`
	// Caps of one streamed model response (limits.go).
	MaxToolArgumentBytes *int `json:"maxToolArgumentBytes"`
	MaxResponseTextBytes *int `json:"maxResponseTextBytes"`
	// MaxTurnRequests caps the model requests of one turn (0: the
	// default, agent.DefaultMaxTurnRequests).
	MaxTurnRequests int `json:"maxTurnRequests"`
	// EditTools chooses the edit tools per model: auto, patch, replace
	// or all (tools.ParseEditTools).
	EditTools string `json:"editTools"`

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
	ContextWindow int      `json:"contextWindow"`
}

var (
	configKeys = []string{"model", "models", "maxRetries", "promptTimeout", "executionState", "logLevel", "logFile", "modelsFile", "telemetryFile",
		"mode", "permission", "allowedCommands", "deniedCommands", "readOnlyRoots", "deniedPathPrefixes", "commandTimeout", "maxCommandRuntime", "sessionDir", "stopHooks", "offloadThreshold", "modelTitles", "resize",
		"maxToolArgumentBytes", "maxResponseTextBytes", "sandbox", "rulesFiles", "hooks", "discoverModels",
		"maxTurnRequests", "editTools", "terminal", "shell"}
	modelKeys = []string{"model", "name", "description", "baseUrl", "apiKeyEnv", "thoughtLevels", "thoughtLevel", "contextWindow"}
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
// A file that cannot be used is a *configFileError, which names the line
// and column and how to fix it.
func loadConfig(path string, explicit bool) (*fileConfig, error) {
	if path == "" {
		return &fileConfig{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return &fileConfig{}, nil
		}
		return nil, &configFileError{Path: path, Msg: err.Error(),
			Fix: "check the path given with --config or ACP_AGENT_CONFIG, or remove that setting to use the default file"}
	}
	cfg, err := parseConfig(data)
	if err != nil {
		return nil, locate(path, data, err)
	}
	return cfg, nil
}

// configFileError is a config file the agent cannot use: where, what and
// how to fix it. The agent still starts with it (initialize succeeds) and
// answers session/new with it, as it does when no model is usable.
type configFileError struct {
	Path   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Msg    string `json:"error"`
	Fix    string `json:"fix"`
}

func (e *configFileError) Error() string {
	where := "config file " + e.Path
	if e.Line > 0 {
		where += fmt.Sprintf(", line %d, column %d", e.Line, e.Column)
	}
	return where + ": " + e.Msg + ". To fix it: " + e.Fix + "."
}

// ErrorData is the error's JSON-RPC data (acpagent sends it with the
// session/new error).
func (e *configFileError) ErrorData() any { return e }

// memberError is an error about one member of the file, by its path
// (member names and array indices), so locate can point at it.
type memberError struct {
	path []string
	err  error
}

func (e *memberError) Error() string { return e.err.Error() }
func (e *memberError) Unwrap() error { return e.err }

func at(err error, path ...string) error {
	if err == nil {
		return nil
	}
	return &memberError{path: path, err: err}
}

// locate turns a parse error into a configFileError with the line and
// column of the syntax error, the value of the wrong type, or the member
// the error is about, and a fix.
func locate(path string, data []byte, err error) *configFileError {
	ce := &configFileError{Path: path, Msg: err.Error(),
		Fix: "correct the file (its format is in docs/configuration.md) and restart the agent, or start it with --config naming another file"}
	off := int64(-1)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var me *memberError
	switch {
	case errors.As(err, &se):
		off = max(se.Offset-1, 0) // just past the offending byte
		ce.Msg = se.Error()
		ce.Fix = syntaxFix(data, off) + "; then restart the agent"
	case errors.As(err, &te):
		off = te.Offset - 1 // the end of the value
		if te.Field != "" {
			ce.Msg = fmt.Sprintf("%q: expected %s, got JSON %s", te.Field, jsonKind(te.Type), te.Value)
			if o := memberOffset(data, strings.Split(te.Field, ".")); o >= 0 {
				off = o
			}
		}
	case errors.As(err, &me):
		off = memberOffset(data, me.path)
	}
	if off >= 0 && off <= int64(len(data)) {
		ce.Line = 1 + bytes.Count(data[:off], []byte("\n"))
		ce.Column = int(off) - bytes.LastIndexByte(data[:off], '\n')
	}
	return ce
}

// jsonKind names what the file must hold where the decoder wanted t: the
// JSON kind for objects and arrays (not main.sandboxFile), else the Go
// type (int, string, bool), which reads as plainly.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return t.String()
}

// syntaxFix guesses the fix of a JSON syntax error at off from the byte
// there and before it.
func syntaxFix(data []byte, off int64) string {
	if off >= int64(len(data)) {
		return "the file ends too early: close every { and [ and string"
	}
	prev := bytes.TrimRight(data[:off], " \t\r\n")
	switch c := data[off]; {
	case (c == '}' || c == ']') && bytes.HasSuffix(prev, []byte(",")):
		return "remove the comma before it: JSON allows no trailing commas"
	case c == '/' || c == '#':
		return "remove the comment: JSON has no comments"
	case c == '\'':
		return "use double quotes: JSON strings and names are in \"double quotes\""
	case c == '"' && len(prev) > 0 && (prev[len(prev)-1] == '"' || prev[len(prev)-1] == '}' || prev[len(prev)-1] == ']' || prev[len(prev)-1] >= '0' && prev[len(prev)-1] <= '9' || bytes.HasSuffix(prev, []byte("true")) || bytes.HasSuffix(prev, []byte("false"))):
		return "add the missing comma before it"
	}
	return "correct the JSON there"
}

// memberOffset is the offset of the name of the member at path (or of the
// array element), -1 when it is not in data.
func memberOffset(data []byte, path []string) int64 {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(depth int) (int64, bool)
	// walk reads one value; at depth it looks for path[depth].
	walk = func(depth int) (int64, bool) {
		tok, err := dec.Token()
		if err != nil {
			return -1, true
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return -1, false
		}
		switch d {
		case '{':
			for dec.More() {
				start := dec.InputOffset()
				key, err := dec.Token()
				if err != nil {
					return -1, true
				}
				name, _ := key.(string)
				if depth < len(path) && name == path[depth] {
					if depth == len(path)-1 {
						return keyStart(data, start), true
					}
					if off, done := walk(depth + 1); done {
						return off, true
					}
					continue
				}
				if off, done := walk(len(path) + 1); done && off >= 0 {
					return off, true
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				start := dec.InputOffset()
				if depth < len(path) && strconv.Itoa(i) == path[depth] {
					if depth == len(path)-1 {
						return keyStart(data, start), true
					}
					if off, done := walk(depth + 1); done {
						return off, true
					}
					continue
				}
				if off, done := walk(len(path) + 1); done && off >= 0 {
					return off, true
				}
			}
		}
		dec.Token() // the closing delimiter
		return -1, false
	}
	off, _ := walk(0)
	return off
}

// keyStart skips the separators after offset start (the decoder's offset
// before a token) to the token itself.
func keyStart(data []byte, start int64) int64 {
	for start < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[start]) >= 0 {
		start++
	}
	return start
}

// parseConfig is strict: an unknown or misspelt member is an error, so a
// typo never silently drops a setting.
func parseConfig(data []byte) (*fileConfig, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	if err := checkKeys(top, configKeys, "", nil); err != nil {
		return nil, err
	}
	var models []map[string]json.RawMessage
	if raw, ok := top["models"]; ok {
		if err := json.Unmarshal(raw, &models); err != nil {
			return nil, at(fmt.Errorf(`"models" must be an array of objects: %v`, err), "models")
		}
		for i, m := range models {
			if err := checkKeys(m, modelKeys, fmt.Sprintf(" in models[%d]", i), []string{"models", strconv.Itoa(i)}); err != nil {
				return nil, err
			}
		}
	}
	if raw, ok := top["terminal"]; ok && string(raw) != "null" {
		var term map[string]json.RawMessage
		if err := json.Unmarshal(raw, &term); err != nil {
			return nil, at(fmt.Errorf(`"terminal" must be an object: %v`, err), "terminal")
		}
		if err := checkKeys(term, terminalKeys, ` in "terminal"`, []string{"terminal"}); err != nil {
			return nil, err
		}
	}
	// The other objects are as strict as the top level: encoding/json
	// would drop "sandbox": {"denied_paths": [...]} without a word (the
	// secret then stays readable) and take "deniedpaths" for deniedPaths.
	for _, o := range []struct {
		member string
		keys   []string
	}{{"sandbox", sandboxKeys}, {"resize", resizeKeys}, {"hooks", hookEvents}} {
		if err := checkObjectKeys(top[o.member], o.keys, []string{o.member}); err != nil {
			return nil, err
		}
	}
	if err := checkHookEntries(top["hooks"]); err != nil {
		return nil, err
	}
	var cfg fileConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&cfg); err != nil {
		return nil, err
	}
	for i, m := range cfg.Models {
		if _, err := agent.ParseModelSpec(m.Model); err != nil {
			return nil, at(fmt.Errorf("models[%d]: %w", i, err), "models", strconv.Itoa(i), "model")
		}
		if m.BaseURL != "" {
			// "localhost:11434/v1" without its scheme would fail only at
			// the first prompt, as an unsupported protocol scheme.
			if u, err := url.Parse(m.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				// Not echoed: a URL may carry a password.
				return nil, at(fmt.Errorf(`models[%d]: "baseUrl" must be an absolute http:// or https:// URL, such as "http://localhost:11434/v1"`, i), "models", strconv.Itoa(i), "baseUrl")
			}
		}
		// Whether a level suits the model is the host's to say (it knows
		// the provider's levels); a name that is no level at all is the
		// file's error, with its line and column.
		for j, l := range append(slices.Clone(m.ThoughtLevels), m.ThoughtLevel) {
			if l != "" && !slices.Contains(thoughtLevelNames, l) {
				member, path := "thoughtLevel", []string{"models", strconv.Itoa(i), "thoughtLevel"}
				if j < len(m.ThoughtLevels) {
					member, path = "thoughtLevels", []string{"models", strconv.Itoa(i), "thoughtLevels"}
				}
				return nil, at(fmt.Errorf(`models[%d]: %q: unknown thought level %q (use off, low, medium or high)`, i, member, l), path...)
			}
		}
		if m.ContextWindow < 0 {
			return nil, at(fmt.Errorf("models[%d]: \"contextWindow\" must be a positive number of tokens", i), "models", strconv.Itoa(i), "contextWindow")
		}
	}
	if cfg.Model != "" {
		if _, err := agent.ParseModelSpec(cfg.Model); err != nil {
			return nil, at(fmt.Errorf(`"model": %w`, err), "model")
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
			return nil, at(fmt.Errorf(`%q %q must be a duration such as "10m" or "90s"`, d.name, d.text), d.name)
		}
		*d.dst = v
	}
	if cfg.Mode != "" {
		if _, err := policy.ParseMode(cfg.Mode); err != nil {
			return nil, at(fmt.Errorf(`"mode": %w`, err), "mode")
		}
	}
	if cfg.Permission != "" {
		if _, err := policy.ParsePolicyMode(cfg.Permission); err != nil {
			return nil, at(fmt.Errorf(`"permission": %w`, err), "permission")
		}
	}
	for _, r := range cfg.ReadOnlyRoots {
		if !filepath.IsAbs(r) {
			return nil, at(fmt.Errorf(`"readOnlyRoots": %q is not an absolute path`, r), "readOnlyRoots")
		}
	}
	if cfg.Sandbox != nil {
		// The file tools keep out of these in every sandbox mode (off
		// included), so a relative one matters everywhere: the file
		// cannot be used, and sessions say where and why.
		for i, d := range cfg.Sandbox.DeniedPaths {
			if !filepath.IsAbs(d) {
				return nil, at(fmt.Errorf(`"sandbox.deniedPaths": %q is not an absolute path (it applies to the file tools in every sandbox mode; ~ is not expanded)`, d), "sandbox", "deniedPaths", strconv.Itoa(i))
			}
		}
		for i, d := range cfg.Sandbox.ProtectedPaths {
			if !filepath.IsAbs(d) {
				return nil, at(fmt.Errorf(`"sandbox.protectedPaths": %q is not an absolute path (it applies to the file tools in every sandbox mode; ~ is not expanded)`, d), "sandbox", "protectedPaths", strconv.Itoa(i))
			}
		}
	}
	if err := cfg.Terminal.check(); err != nil {
		return nil, at(err, "terminal")
	}
	if err := cfg.checkStreamLimits(); err != nil {
		return nil, err
	}
	if cfg.LogLevel != "" {
		if _, _, err := telemetry.ParseLevel(cfg.LogLevel); err != nil {
			return nil, at(fmt.Errorf(`"logLevel": %w`, err), "logLevel")
		}
	}
	if cfg.Sandbox != nil && !slices.Contains([]string{"", "auto", "on", "off"}, cfg.Sandbox.Mode) {
		return nil, at(fmt.Errorf(`"sandbox.mode" %q: want "auto", "on" or "off"`, cfg.Sandbox.Mode), "sandbox", "mode")
	}
	if cfg.OffloadThreshold < 0 {
		return nil, at(fmt.Errorf(`"offloadThreshold" must not be negative, got %d`, cfg.OffloadThreshold), "offloadThreshold")
	}
	if r := cfg.Resize; r != nil {
		for _, f := range []struct {
			name string
			v    int
		}{{"maxMessagesTextLength", r.MaxMessagesTextLength}, {"maxKeepMessagesCount", r.MaxKeepMessagesCount}, {"everyNTurns", r.EveryNTurns}} {
			if f.v < 0 {
				return nil, at(fmt.Errorf(`"resize.%s" must not be negative (0 disables it), got %d`, f.name, f.v), "resize", f.name)
			}
		}
	}
	if cfg.MaxTurnRequests < 0 {
		return nil, at(fmt.Errorf(`"maxTurnRequests" must not be negative, got %d`, cfg.MaxTurnRequests), "maxTurnRequests")
	}
	if _, err := tools.ParseEditTools(cfg.EditTools); err != nil {
		return nil, at(fmt.Errorf(`"editTools": %w`, err), "editTools")
	}
	if err := tools.CheckShell(cfg.Shell); err != nil {
		return nil, at(fmt.Errorf(`"shell": %w`, err), "shell")
	}
	if cfg.MaxRetries != nil && *cfg.MaxRetries < 0 {
		return nil, at(fmt.Errorf(`"maxRetries" must not be negative, got %d`, *cfg.MaxRetries), "maxRetries")
	}
	if _, err := cfg.Hooks.Hooks(); err != nil {
		return nil, at(fmt.Errorf(`"hooks": %w`, err), "hooks")
	}
	return &cfg, nil
}

// thoughtLevelNames are the levels a model entry may name.
var thoughtLevelNames = []string{"off", "low", "medium", "high"}

// The members of the config file's objects below the top level
// (terminalKeys is cmdpath.go's).
var (
	sandboxKeys = []string{"mode", "network", "allowGitWrites", "autoApprove", "extraWritable", "deniedPaths", "protectedPaths", "protectStartupFiles"}
	resizeKeys  = []string{"maxMessagesTextLength", "maxKeepMessagesCount", "everyNTurns"}
	hookEvents  = []string{"beforeTool", "afterTool", "promptSubmit", "sessionStart"}
	hookKeys    = []string{"command", "tools", "timeout", "outsideSandbox", "justification"}
)

// checkObjectKeys checks the members of the object raw, at path, when it
// is there: absent and null are fine, another type is left to the
// decoder's error.
func checkObjectKeys(raw json.RawMessage, names, path []string) error {
	var obj map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil
	}
	return checkKeys(obj, names, fmt.Sprintf(" in %q", strings.Join(path, ".")), path)
}

// checkHookEntries checks the members of each hook of "hooks".
func checkHookEntries(raw json.RawMessage) error {
	var events map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &events) != nil {
		return nil
	}
	for _, ev := range hookEvents {
		var list []json.RawMessage
		if json.Unmarshal(events[ev], &list) != nil {
			continue
		}
		for i, h := range list {
			var obj map[string]json.RawMessage
			if json.Unmarshal(h, &obj) != nil || obj == nil {
				continue
			}
			if err := checkKeys(obj, hookKeys, fmt.Sprintf(` in "hooks.%s[%d]"`, ev, i), []string{"hooks", ev, strconv.Itoa(i)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkKeys rejects members not exactly in names (encoding/json would
// match "ModelS" to "models" case-insensitively); the error points at the
// first unknown one, below the member at path.
func checkKeys(obj map[string]json.RawMessage, names []string, where string, path []string) error {
	var unknown []string
	first := ""
	for k := range obj {
		if !slices.Contains(names, k) {
			hint := ""
			for _, n := range names {
				if strings.EqualFold(n, k) {
					hint = fmt.Sprintf(" (did you mean %q? names are case-sensitive)", n)
				}
			}
			if n := nearestName(k, names); hint == "" && n != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", n)
			}
			unknown = append(unknown, fmt.Sprintf("%q%s", k, hint))
			if first == "" || k < first {
				first = k
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return at(fmt.Errorf("unknown member %s%s; known members are %s", strings.Join(unknown, ", "), where, strings.Join(names, ", ")),
		append(slices.Clone(path), first)...)
}

// workspace is the built-in tools' rules from the file.
func (c *fileConfig) workspace() tools.WorkspaceConfig {
	return tools.WorkspaceConfig{
		ReadOnlyRoots: c.ReadOnlyRoots, DeniedPathPrefixes: c.DeniedPathPrefixes,
		Terminal:       policy.Terminal{AllowedCommands: c.AllowedCommands, DeniedCommands: c.DeniedCommands, MaxRuntime: c.maxCommandRuntime},
		CommandTimeout: c.commandTimeout,
		NoRules:        c.RulesFiles != nil && !*c.RulesFiles,
		EditTools:      c.EditTools,
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
			APIKeyEnv: m.APIKeyEnv, ThoughtLevels: m.ThoughtLevels, ThoughtLevel: m.ThoughtLevel, ContextWindow: m.ContextWindow,
		})
	}
	return out
}

// nearestName is the name a typo of which k is (two edits at most, a
// swap of neighbours counting as one; "" when none is, or k is short).
func nearestName(k string, names []string) string {
	if len(k) < 4 {
		return ""
	}
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(strings.ToLower(k), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
