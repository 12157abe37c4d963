// Command acp-agent is a coding agent that editors launch as a subprocess
// and talk to over the Agent Client Protocol on stdin and stdout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/acp-agent/acp-agent/runtime/sandbox"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/acpv2agent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
	agentsettings "github.com/acp-agent/acp-agent/agent/settings"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
	"github.com/acp-agent/acp-agent/runtime/scratch"
	"github.com/acp-agent/acp-agent/telemetry"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	// A confined command starts as this binary in the sandbox's helper
	// mode; it never returns then.
	sandbox.Main(os.Args)
	runtime.NotDumpable()
	// Descriptors an editor leaked to the agent never reach its commands.
	sandbox.CloseInheritedOnExec()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdin, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !errors.Is(ee.err, errSilent) {
			fmt.Fprintln(os.Stderr, "acp-agent:", ee.err)
		}
		os.Exit(ee.code)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acp-agent:", err)
		os.Exit(2)
	}
}

// subcommands are the words run takes first.
var subcommands = []string{"doctor", "exec", "login", "serve", "connect"}

// run is the whole program. stdout carries only ACP messages (written by
// the transport); --help, --version and doctor are the only other output
// there, and they do not start the protocol. "acp-agent exec" is the
// non-interactive mode (exec.go).
func run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 && args[0] == "doctor" {
		return runDoctor(ctx, stdout, stderr, args[1:])
	}
	if len(args) > 0 && args[0] == "exec" {
		return runExec(ctx, stdin, stdout, stderr, args[1:])
	}
	if len(args) > 0 && args[0] == "login" {
		return runLogin(ctx, stdin, stdout, stderr, args[1:], os.Getenv) // login.go
	}
	if len(args) > 0 && args[0] == "serve" {
		return runServe(ctx, stdout, stderr, args[1:]) // serve.go
	}
	if len(args) > 0 && args[0] == "connect" {
		return runConnect(ctx, stdin, stdout, stderr, args[1:]) // connect.go
	}
	// What acp-agent login stored fills in what the environment leaves
	// unset.
	st, err := parseSettings("acp-agent", args, stdout, stderr, withCredentials(os.Getenv), nil)
	if err != nil {
		return err
	}
	if st.fs.NArg() > 0 {
		if arg := st.fs.Arg(0); slices.Contains(subcommands, arg) {
			return fmt.Errorf("%q must come first, before its flags: acp-agent %s [flags] (see acp-agent %s --help)", arg, arg, arg)
		}
		if n := nearestName(st.fs.Arg(0), subcommands); n != "" {
			return fmt.Errorf("unexpected argument %q (did you mean acp-agent %s? see --help)", st.fs.Arg(0), n)
		}
		return fmt.Errorf("unexpected argument %q (see --help)", st.fs.Arg(0))
	}
	if st.version {
		return printVersion(stdout)
	}
	if isTerminal(stdin) {
		// Someone typed acp-agent in a shell: say what it is waiting for.
		fmt.Fprintln(stderr, `acp-agent speaks the Agent Client Protocol on stdin/stdout and is started by an editor; to run a task here, try: acp-agent exec "PROMPT" (or acp-agent --help, acp-agent doctor). Ctrl-D quits.`)
	}
	// What the initialize response does not need (the session
	// directory's stale files, the login shell's PATH) starts once the
	// agent's first message is out.
	st.deferStartWork = true
	a, log, cleanup, err := st.newAgent(stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	defer a.Close() // ends the model discovery, if it runs, and waits for it
	// ACP v2 to the clients that ask for it, on the same host: a session
	// is the same whichever version opens it.
	svc := acp.NewAgentService(a, acp.Options{MaxMessageBytes: st.maxLine, Logger: log, V2: acpv2agent.New(a.Host())})
	return svc.Serve(ctx, stdin, &afterFirstWrite{w: stdout, then: st.startWork.start})
}

// startWork is start-up work the initialize response does not wait for:
// each task runs on its own goroutine once start is called, and wait
// waits for them (the agent's exit). After wait, start starts nothing.
type startWork struct {
	once  sync.Once
	tasks []func()
	wg    sync.WaitGroup
}

func (w *startWork) add(task func()) { w.tasks = append(w.tasks, task) }

func (w *startWork) start() {
	w.once.Do(func() {
		for _, task := range w.tasks {
			w.wg.Go(task)
		}
	})
}

func (w *startWork) wait() {
	w.once.Do(func() {})
	w.wg.Wait()
}

// afterFirstWrite calls then after the first Write to w has returned:
// on stdio, once the first message (the initialize response) is out.
type afterFirstWrite struct {
	w    io.Writer
	once sync.Once
	then func()
}

func (a *afterFirstWrite) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	a.once.Do(a.then)
	return n, err
}

// settings are the program's settings, from flags, then the environment,
// then the config file, then the defaults.
type settings struct {
	fs            *flag.FlagSet
	model         string
	choices       []acpagent.ModelChoice
	logLevel      string
	logFile       string
	maxLine       int
	maxRetries    int
	modelsFile    string
	telemetryFile string
	execState     bool
	discover      bool
	promptTimeout time.Duration
	mode          policy.Mode
	permission    policy.PolicyMode
	workspace     tools.WorkspaceConfig
	sessionDir    string
	// tokenFile is serve's bearer token file ("" in the other commands).
	tokenFile   string
	modelTitles bool
	// layers are the resolved settings, nearest layer first.
	layers    *agentsettings.Settings
	stopHooks []agent.StopHook
	hooks     []agent.Hook
	resize    *compact.ResizePolicy
	offload   int
	// maxTurnRequests caps one turn's model requests (0: the default).
	maxTurnRequests int
	version         bool
	getenv          func(string) string
	// logLevelSet: a log level was given (flag, environment or config),
	// so it applies to stderr too.
	logLevelSet bool
	// configErr is a config file the agent could not use: it starts
	// without it and explains at session/new (nil: none).
	configErr error
	// terminal is the config's command environment; userPath resolves
	// the PATH commands get (newAgent starts it).
	terminal *terminalFile
	userPath *userPath
	// notices are what the user must know about the setup, told once in
	// the first session (a notice update).
	notices []acpagent.Notice

	// startWork is what newAgent leaves for after the first response;
	// with deferStartWork unset, newAgent starts it at once (exec,
	// serve).
	startWork      startWork
	deferStartWork bool

	// oneShot: the process runs one turn of one session (exec):
	// host.Config.OneShot.
	oneShot bool

	// recorder is the telemetry newAgent sets up (serve's transport
	// reports to it too).
	recorder *telemetry.Recorder

	// streamLimits cap one model response (limits.go).
	streamLimits llm.Limits
	// The sandbox's flags and config (sandbox.go), resolved in newAgent.
	sandboxFlags sandboxFlags
	sandboxFile  *sandboxFile
}

// parseFlags parses a command's flags: --help prints its usage to stdout
// and returns flag.ErrHelp; on a bad flag the flag package prints the
// error on stderr, this adds where the usage is, and the error returned
// exits 2 without saying it again (stdout, the protocol, gets nothing).
func parseFlags(fs *flag.FlagSet, name string, args []string, stdout, stderr io.Writer) error {
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout, fs, name)
		return err
	}
	fmt.Fprintf(stderr, "Run %s --help for the usage.\n", name)
	return &exitError{code: exitUsage, err: fmt.Errorf("%w%w", errSilent, err)}
}

// parseSettings parses args with the common flags; extra adds a
// subcommand's own flags before parsing. --help prints the usage to stdout
// and returns flag.ErrHelp; a bad flag is an error (the usage is not
// repeated on stderr, only where to find it). A config file that cannot be
// used is not an error here: it is st.configErr, and the settings are
// those of the flags, the environment and the defaults.
func parseSettings(name string, args []string, stdout, stderr io.Writer, getenv func(string) string, extra func(*flag.FlagSet)) (*settings, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	st := &settings{fs: fs, getenv: getenv}
	fl := st.defineFlags()
	if extra != nil {
		extra(fs)
	}
	if err := parseFlags(fs, name, args, stdout, stderr); err != nil {
		return nil, err
	}
	path, explicit := fl.configPath, fl.configPath != ""
	if !explicit {
		path = defaultConfigPath(getenv)
	}
	file, err := loadConfig(path, explicit)
	if err != nil {
		st.configErr = err
		file = &fileConfig{}
	}
	// Three layers (agent/settings): the defaults, the config file, then
	// the flags and the environment. A key is taken from the nearest
	// layer that has it.
	defaults := defaultLayer(name, getenv)
	fileLayer := configLayer(defaults, file)
	flagLayer, err := st.flagLayer(fileLayer, fl)
	if err != nil {
		return nil, err
	}
	if err := fl.limits.apply(defaults, fileLayer, flagLayer, file); err != nil {
		return nil, err
	}
	if err := st.resolve(flagLayer, file); err != nil {
		return nil, err
	}
	return st, nil
}

// flagValues are the flags parseSettings reads itself rather than into
// settings' fields.
type flagValues struct {
	configPath, promptTimeout, mode, permission string
	limits                                      streamLimitFlags
}

// defineFlags defines the common flags on st.fs, with the environment's
// values as defaults.
func (st *settings) defineFlags() *flagValues {
	fs, getenv := st.fs, st.getenv
	fl := &flagValues{}
	fs.StringVar(&fl.configPath, "config", getenv("ACP_AGENT_CONFIG"), "config file (default $XDG_CONFIG_HOME/acp-agent/config.json if it exists; env ACP_AGENT_CONFIG; format in docs/configuration.md)")
	fs.StringVar(&st.model, "model", getenv("ACP_AGENT_MODEL"), "model as PROVIDER/MODEL: openai/<model>, anthropic/<model> or replay/default (env ACP_AGENT_MODEL; default "+agent.DefaultModel+")")
	fs.StringVar(&st.logLevel, "log-level", getenv("ACP_AGENT_LOG_LEVEL"), "log level of stderr and the log file: debug, info, warn, error or off (env ACP_AGENT_LOG_LEVEL; default: warnings and errors on stderr, info and up in $XDG_STATE_HOME/acp-agent/log/acp-agent.log)")
	fs.StringVar(&st.logFile, "log-file", getenv("ACP_AGENT_LOG_FILE"), "append all logs to this file instead of stderr and the default log file (env ACP_AGENT_LOG_FILE)")
	fs.IntVar(&st.maxLine, "max-message-bytes", acp.DefaultMaxMessageBytes, "longest accepted JSON-RPC message, in bytes")
	fs.IntVar(&st.maxRetries, "max-retries", envInt(getenv, "ACP_AGENT_MAX_RETRIES", -1), "retries of a transient model failure (429, 5xx, connection errors) before any output; 0 disables (env ACP_AGENT_MAX_RETRIES; default 2)")
	fs.StringVar(&st.modelsFile, "models-file", getenv("ACP_AGENT_MODELS_FILE"), "model pricing/context-window overrides (default $XDG_CONFIG_HOME/acp-agent/models.json if it exists; env ACP_AGENT_MODELS_FILE)")
	fs.StringVar(&st.telemetryFile, "telemetry-file", getenv("ACP_AGENT_TELEMETRY_FILE"), "also append telemetry events to this file as JSON lines (env ACP_AGENT_TELEMETRY_FILE)")
	fs.BoolVar(&st.execState, "execution-state", envBool(getenv, "ACP_AGENT_EXECUTION_STATE"), "send execution_state_update and retry_update to every client (otherwise only to clients that opt in; env ACP_AGENT_EXECUTION_STATE)")
	fs.BoolVar(&st.discover, "discover-models", true, "list the models the configured providers' servers offer (GET /v1/models, Anthropic's models list) in the model picker, fetched in the background (env ACP_AGENT_DISCOVER_MODELS)")
	fs.StringVar(&fl.promptTimeout, "prompt-timeout", getenv("ACP_AGENT_PROMPT_TIMEOUT"), "end a prompt turn that runs longer than this, e.g. 10m (env ACP_AGENT_PROMPT_TIMEOUT; default no limit)")
	fs.StringVar(&fl.mode, "mode", getenv("ACP_AGENT_MODE"), "mode sessions start in: read-only, default, accept-edits or full-access (env ACP_AGENT_MODE; default default)")
	fs.StringVar(&fl.permission, "permission", getenv("ACP_AGENT_PERMISSION"), "what happens to a tool call the mode says to ask about: ask the editor, allow, or deny (env ACP_AGENT_PERMISSION; default ask)")
	fs.StringVar(&st.sessionDir, "session-dir", getenv("ACP_AGENT_SESSION_DIR"), "where sessions are stored, one JSONL file each (env ACP_AGENT_SESSION_DIR; default $XDG_STATE_HOME/acp-agent/sessions)")
	fs.BoolVar(&st.version, "version", false, "print the version and exit")
	fl.limits = addStreamLimitFlags(fs, getenv)
	st.sandboxFlags = addSandboxFlags(fs, getenv)
	return fl
}

// defaultLayer is the program's defaults, the farthest layer; exec's
// stderr is the user's terminal, so it logs only warnings there.
func defaultLayer(name string, getenv func(string) string) *agentsettings.Settings {
	defaultLevel := "info"
	if name != "acp-agent" {
		defaultLevel = "warn"
	}
	return agentsettings.New(map[string]any{
		"model": agent.DefaultModel, "logLevel": defaultLevel, "maxRetries": agent.DefaultMaxRetries,
		"executionState": false, "mode": string(policy.ModeDefault), "permission": string(policy.PolicyAsk),
		"sessionDir": persistence.DefaultDir(getenv), "modelTitles": false, "discoverModels": true,
	})
}

// configLayer is the config file's settings, over defaults.
func configLayer(defaults *agentsettings.Settings, file *fileConfig) *agentsettings.Settings {
	l := defaults.Layer("config file")
	for key, v := range map[string]any{"model": file.Model, "logLevel": file.LogLevel, "logFile": file.LogFile,
		"modelsFile": file.ModelsFile, "telemetryFile": file.TelemetryFile, "mode": file.Mode,
		"permission": file.Permission, "sessionDir": file.SessionDir} {
		if v != "" {
			l.Set(key, v)
		}
	}
	for key, v := range map[string]*bool{"executionState": file.ExecutionState, "modelTitles": file.ModelTitles, "discoverModels": file.DiscoverModels} {
		if v != nil {
			l.Set(key, *v)
		}
	}
	if file.MaxRetries != nil {
		l.Set("maxRetries", *file.MaxRetries)
	}
	if file.promptTimeout > 0 {
		l.Set("promptTimeout", file.promptTimeout)
	}
	return l
}

// flagLayer is the flags' and the environment's settings, the nearest
// layer, over fileLayer.
func (st *settings) flagLayer(fileLayer *agentsettings.Settings, fl *flagValues) (*agentsettings.Settings, error) {
	fs, getenv := st.fs, st.getenv
	if err := checkEnvValues(fs, getenv); err != nil {
		return nil, err
	}
	if isSet(fs, "max-retries") && st.maxRetries < 0 {
		return nil, fmt.Errorf("--max-retries: must not be negative, got %d", st.maxRetries)
	}
	l := fileLayer.Layer("flags and environment")
	for key, v := range map[string]string{"model": st.model, "logLevel": st.logLevel, "logFile": st.logFile,
		"modelsFile": st.modelsFile, "telemetryFile": st.telemetryFile, "mode": fl.mode, "permission": fl.permission,
		"sessionDir": st.sessionDir} {
		if v != "" {
			l.Set(key, v)
		}
	}
	if st.maxRetries >= 0 {
		l.Set("maxRetries", st.maxRetries)
	}
	if isSet(fs, "execution-state") || getenv("ACP_AGENT_EXECUTION_STATE") != "" {
		l.Set("executionState", st.execState)
	}
	if isSet(fs, "discover-models") {
		l.Set("discoverModels", st.discover)
	} else if v := getenv("ACP_AGENT_DISCOVER_MODELS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("ACP_AGENT_DISCOVER_MODELS: %q is not true or false", v)
		}
		l.Set("discoverModels", b)
	}
	if fl.promptTimeout != "" {
		d, err := time.ParseDuration(fl.promptTimeout)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("--prompt-timeout (or ACP_AGENT_PROMPT_TIMEOUT): %q is not a duration such as 10m or 90s", fl.promptTimeout)
		}
		l.Set("promptTimeout", d)
	}
	return l, nil
}

// resolve sets st from the layers (the nearest first) and from what only
// the config file says.
func (st *settings) resolve(layers *agentsettings.Settings, file *fileConfig) error {
	st.layers = layers
	st.model = layers.String("model", "")
	st.logLevel = layers.String("logLevel", "")
	if src := source(layers, "logLevel"); src != "" && src != "defaults" {
		st.logLevelSet = true
	}
	st.logFile = layers.String("logFile", "")
	st.modelsFile = layers.String("modelsFile", "")
	st.telemetryFile = layers.String("telemetryFile", "")
	st.sessionDir = layers.String("sessionDir", "")
	st.maxRetries = layers.Int("maxRetries", agent.DefaultMaxRetries)
	st.execState = layers.Bool("executionState", false)
	st.modelTitles = layers.Bool("modelTitles", false)
	st.discover = layers.Bool("discoverModels", true)
	st.promptTimeout = layers.Duration("promptTimeout", 0)
	st.streamLimits = streamLimits(layers)
	st.choices = file.choices()
	st.workspace = file.workspace()
	st.workspace.UserRules = userRulesPath(st.getenv)
	st.workspace.UserPrompts = userPromptDirs(st.getenv)
	st.workspace.Env = file.Terminal.env()
	st.sandboxFile = file.Sandbox
	st.terminal = file.Terminal
	for _, line := range file.StopHooks {
		st.stopHooks = append(st.stopHooks, agent.CommandStopHook(line, 0))
	}
	var err error
	if st.hooks, err = file.Hooks.Hooks(); err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	st.offload = file.OffloadThreshold
	st.maxTurnRequests = file.MaxTurnRequests
	if r := file.Resize; r != nil {
		st.resize = &compact.ResizePolicy{MaxMessagesTextLength: r.MaxMessagesTextLength, MaxKeepMessagesCount: r.MaxKeepMessagesCount, EveryNTurns: r.EveryNTurns}
	}
	if st.mode, err = policy.ParseMode(layers.String("mode", "")); err != nil {
		return fmt.Errorf("mode (from the %s): %w", source(layers, "mode"), err)
	}
	if st.permission, err = policy.ParsePolicyMode(layers.String("permission", "")); err != nil {
		return fmt.Errorf("permission (from the %s): %w", source(layers, "permission"), err)
	}
	return nil
}

// source names the layer a setting came from, for error messages.
func source(l *agentsettings.Settings, key string) string {
	name, _ := l.Source(key)
	return name
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// newAgent builds the logger, telemetry and agent the settings describe.
// cleanup closes the files they opened. What the user can fix (the config
// file, the models file, the session directory) does not stop it: the
// agent starts and explains, at session/new or in a notice.
func (st *settings) newAgent(stderr io.Writer) (*acpagent.Agent, *slog.Logger, func(), error) {
	var closers []io.Closer
	cleanup := func() {
		for _, c := range slices.Backward(closers) {
			c.Close()
		}
	}
	log, logClosers, err := st.logger(stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	closers = append(closers, logClosers...)
	// Last at exit, once the sessions' workspaces removed their
	// directories: this process's scratch directory (runtime/scratch).
	closers = append(closers, closerFunc(func() {
		if err := scratch.Release(); err != nil {
			log.Warn("removing the scratch directory", "error", err)
		}
	}))
	setupErr := st.configErr
	if setupErr != nil {
		log.Info("the config file cannot be used; sessions explain it until it is fixed", "error", setupErr)
	}
	models, err := loadModels(st.modelsFile, st.getenv)
	if err != nil {
		log.Info("the models file cannot be used", "error", err)
		models = pricing.Default()
		st.notices = append(st.notices, acpagent.Notice{Severity: host.NoticeWarning, Title: "The models file cannot be used",
			Description: err.Error() + ". The built-in model table is used until it is fixed."})
	}
	// Telemetry goes to the log (stderr or --log-file) and, if asked, to a
	// JSONL file; never to stdout.
	sinks := []telemetry.Sink{telemetry.SlogSink{Logger: log}}
	if st.telemetryFile != "" {
		jsonl, err := telemetry.OpenJSONL(st.telemetryFile)
		if err != nil {
			cleanup()
			return nil, nil, nil, fmt.Errorf("telemetry file: %w", err)
		}
		closers = append(closers, jsonl)
		sinks = append(sinks, jsonl)
	}
	var store *persistence.Store
	if st.sessionDir == "" {
		// No HOME, no XDG_STATE_HOME, no flag: still usable, in memory.
		log.Info("no session directory: sessions are kept in memory only")
		st.notices = append(st.notices, acpagent.Notice{Severity: host.NoticeWarning, Title: "Sessions are not saved",
			Description: "There is no session directory (set --session-dir, XDG_STATE_HOME or HOME): sessions are kept in memory only and cannot be loaded after a restart."})
	} else if store, err = persistence.OpenStore(st.sessionDir); err != nil {
		log.Warn("the session directory cannot be used", "error", err)
		st.notices = append(st.notices, acpagent.Notice{Severity: host.NoticeWarning, Title: "Sessions are not saved",
			Description: fmt.Sprintf("The session directory %s cannot be used (%v): sessions are kept in memory only. Fix its permissions or choose another with --session-dir.", st.sessionDir, err)})
		store = nil
	} else {
		// What agents killed before saving a session left behind goes,
		// in the background and after the initialize response: a large
		// directory takes milliseconds to list. The agent's exit waits
		// (cleanup).
		st.startWork.add(func() {
			// Only after an agent stopped without saying it left
			// nothing does this list the whole directory.
			removed, full, err := store.RemoveStaleAtStart()
			log.Debug("session directory clean-up", "listed", full)
			if err != nil {
				log.Warn("removing stale files of the session directory", "error", err)
			}
			if len(removed) > 0 {
				log.Info("removed what stopped agents left in the session directory", "files", removed)
			}
		})
		// Runs after the work above ends (closers run in reverse):
		// records that this agent left nothing, if so.
		closers = append(closers, store)
	}
	// What agents killed before (SIGKILL, OOM) left in the temporary
	// directory: their commands' TMPDIRs, with whatever those wrote.
	st.startWork.add(func() {
		removed, err := scratch.RemoveStale()
		if err != nil {
			log.Warn("removing stale scratch directories", "error", err)
		}
		if len(removed) > 0 {
			log.Info("removed the scratch directories of stopped agents", "dirs", removed)
		}
	})
	closers = append(closers, closerFunc(st.startWork.wait))
	// One list for the sandbox and the file tools, sandbox or not.
	denied, err := deniedPaths(st.sandboxFile, st.getenv, st.sessionDir, st.agentPaths())
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	st.workspace.DeniedPaths = denied
	protected, err := protectedPaths(st.sandboxFile, st.getenv)
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	st.workspace.ProtectedPaths = protected
	sb, netInFullAccess, unavailable, err := resolveSandbox(st.sandboxFlags, st.fs, st.sandboxFile, st.getenv, st.sessionDir, denied, protected, log)
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	st.workspace.Sandbox, st.workspace.SandboxUnavailable = sb, unavailable
	if sb == nil && unavailable == "" {
		st.workspace.Unconfined = unconfinedNote(st.sandboxFlags, st.sandboxFile)
	}
	st.notices = append(st.notices, sandboxNotices(sb)...)
	st.workspace.SandboxNetworkInFullAccess = netInFullAccess
	st.workspace.SandboxAutoApprove = sb != nil && st.sandboxFlags.autoApproveSetting(st.fs, st.sandboxFile, st.getenv)
	st.userPath = newUserPath(st.getenv, st.terminal, log)
	st.startWork.add(st.userPath.resolve)
	closers = append(closers, closerFunc(st.userPath.wait))
	st.workspace.UserPath = st.userPath.Path
	retry := agent.RetryPolicy{MaxRetries: st.maxRetries}
	if st.maxRetries == 0 {
		retry.MaxRetries = -1 // the flag's 0 means none; the policy's 0 means the default
	}
	st.recorder = telemetry.NewRecorder(sinks...)
	a := acpagent.New(acpagent.Config{ExecutionStates: st.execState, TerminalLogin: terminalLogin(), Config: host.Config{Model: st.model, Choices: st.choices, Getenv: st.getenv, Logger: log, Version: agentVersion(),
		Retry: retry, Models: models, Telemetry: st.recorder, DiscoverModels: st.discover,
		PromptTimeout: st.promptTimeout,
		Workspace:     st.workspace, Mode: st.mode, PermissionPolicy: st.permission, Store: store,
		StopHooks: st.stopHooks, Hooks: st.hooks, HooksTrustFile: hooksTrustFile(st.getenv), OffloadThreshold: st.offload, ModelTitles: st.modelTitles, Resize: st.resize, MaxTurnRequests: st.maxTurnRequests,
		StreamLimits: st.streamLimits, SetupError: setupErr, OneShot: st.oneShot,
		Notices: func() []acpagent.Notice { return append(slices.Clone(st.notices), st.userPath.notices()...) }}})
	if !st.deferStartWork {
		st.startWork.start()
	}
	return a, log, cleanup, nil
}

// closerFunc is a func() as an io.Closer.
type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }

// agentPaths are the agent's own files, which no confined command may
// read: the state directory whole (the default sessions and logs, the
// serve bearer token, the trusted hooks), the log file and serve's token
// file. A token read by a command would give whoever drives the model
// the agent itself: a client of serve answers its own escalations.
func (st *settings) agentPaths() []string {
	var out []string
	for _, p := range []string{st.logFile, st.stateDir(), st.tokenFile} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// stateDir is the agent's default state directory, which holds the
// default session directory, the logs, serve's token and the trusted
// hooks ("" without one).
func (st *settings) stateDir() string {
	if dir := persistence.DefaultDir(st.getenv); dir != "" {
		return filepath.Dir(dir)
	}
	return ""
}

// logDir is where the agent's own log files are kept by default: the
// state directory's log/ ("" without one).
func (st *settings) logDir() string {
	dir := persistence.DefaultDir(st.getenv)
	if dir == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(dir), "log")
}

// logger is the agent's log. stderr carries warnings and errors only (an
// editor may show it to the user); everything from info up goes to a log
// file under the state directory, capped in size and rotated. --log-file
// sends everything there instead of stderr; --log-level (or the config's
// logLevel) sets the level of both.
func (st *settings) logger(stderr io.Writer) (*slog.Logger, []io.Closer, error) {
	level, enabled, err := telemetry.ParseLevel(st.logLevel)
	if err != nil {
		return nil, nil, err
	}
	if !enabled {
		return telemetry.NewLogger(io.Discard, 0, false), nil, nil
	}
	if st.logFile != "" {
		f, err := telemetry.OpenLogFile(st.logFile)
		if err != nil {
			return nil, nil, err
		}
		return telemetry.NewLogger(f, level, true), []io.Closer{f}, nil
	}
	stderrLevel, fileLevel := slog.LevelWarn, slog.LevelInfo
	if st.logLevelSet {
		stderrLevel, fileLevel = level, level
	}
	handlers := []slog.Handler{slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: stderrLevel})}
	var closers []io.Closer
	if dir := st.logDir(); dir != "" {
		// A log that cannot be written is not worth stopping for.
		if f, err := telemetry.OpenRotatingFile(filepath.Join(dir, "acp-agent.log"), 0, 0); err == nil {
			handlers = append(handlers, slog.NewTextHandler(f, &slog.HandlerOptions{Level: fileLevel}))
			closers = append(closers, f)
		}
	}
	return slog.New(slog.NewMultiHandler(handlers...)), closers, nil
}

// loadModels merges the user's model table over the embedded one. A file
// named explicitly must exist; the default one is optional.
func loadModels(path string, getenv func(string) string) (*pricing.Table, error) {
	explicit := path != ""
	if !explicit {
		path = pricing.DefaultOverridePath(getenv)
	}
	if path == "" {
		return pricing.Default(), nil
	}
	override, err := pricing.Load(path)
	switch {
	case err == nil:
		return pricing.Default().Merge(override), nil
	case !explicit && errors.Is(err, fs.ErrNotExist):
		return pricing.Default(), nil
	}
	return nil, fmt.Errorf("models file: %w", err)
}

// envValues are the environment variables the flags read as numbers or
// booleans. envInt and envBool fall back to the default on a value they
// cannot parse, so checkEnvValues refuses such a value instead: an
// ACP_AGENT_MAX_RETRIES=three or ACP_AGENT_SANDBOX_NETWORK=yes must not
// quietly become the default (or false) while the user believes it set.
var envValues = []struct {
	flag, env string
	min       int // numbers: the smallest allowed value
	boolean   bool
}{
	{flag: "max-retries", env: "ACP_AGENT_MAX_RETRIES", min: 0},
	{flag: "max-tool-argument-bytes", env: "ACP_AGENT_MAX_TOOL_ARGUMENT_BYTES", min: 1},
	{flag: "max-response-text-bytes", env: "ACP_AGENT_MAX_RESPONSE_TEXT_BYTES", min: 1},
	{flag: "execution-state", env: "ACP_AGENT_EXECUTION_STATE", boolean: true},
	{flag: "sandbox-network", env: "ACP_AGENT_SANDBOX_NETWORK", boolean: true},
	{flag: "sandbox-auto-approve", env: "ACP_AGENT_SANDBOX_AUTO_APPROVE", boolean: true},
}

// checkEnvValues refuses a number or boolean variable of envValues that
// is set to what its flag would not take. A flag given on the command
// line wins, so its variable is not looked at.
func checkEnvValues(fs *flag.FlagSet, getenv func(string) string) error {
	for _, e := range envValues {
		v := getenv(e.env)
		if v == "" || isSet(fs, e.flag) {
			continue
		}
		if e.boolean {
			if _, err := strconv.ParseBool(v); err != nil {
				return fmt.Errorf("%s: %q is not true or false (1, 0, true, false)", e.env, v)
			}
			continue
		}
		if n, err := strconv.Atoi(v); err != nil || n < e.min {
			if e.min > 0 {
				return fmt.Errorf("%s: %q is not a positive whole number", e.env, v)
			}
			return fmt.Errorf("%s: %q is not a whole number of 0 or more", e.env, v)
		}
	}
	return nil
}

func envInt(getenv func(string) string, key string, def int) int {
	if n, err := strconv.Atoi(getenv(key)); err == nil {
		return n
	}
	return def
}

func envBool(getenv func(string) string, key string) bool {
	b, err := strconv.ParseBool(getenv(key))
	return err == nil && b
}
