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
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/pricing"
	"github.com/acp-agent/acp-agent/telemetry"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdin, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acp-agent:", err)
		os.Exit(2)
	}
}

// run is the whole program. stdout carries only ACP messages (written by
// the transport); --help and --version are the only other output there,
// and they do not start the protocol.
func run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	getenv := os.Getenv
	fs := flag.NewFlagSet("acp-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", getenv("ACP_AGENT_MODEL"), "model as PROVIDER/MODEL: openai/<model> or replay/default (env ACP_AGENT_MODEL; default "+agent.DefaultModel+")")
	logLevel := fs.String("log-level", envOr(getenv, "ACP_AGENT_LOG_LEVEL", "info"), "log level: debug, info, warn, error or off (env ACP_AGENT_LOG_LEVEL)")
	logFile := fs.String("log-file", getenv("ACP_AGENT_LOG_FILE"), "append logs to this file instead of stderr (env ACP_AGENT_LOG_FILE)")
	maxLine := fs.Int("max-message-bytes", acp.DefaultMaxMessageBytes, "longest accepted JSON-RPC message, in bytes")
	maxRetries := fs.Int("max-retries", envInt(getenv, "ACP_AGENT_MAX_RETRIES", agent.DefaultMaxRetries), "retries of a transient model failure (429, 5xx, connection errors) before any output; 0 disables (env ACP_AGENT_MAX_RETRIES)")
	modelsFile := fs.String("models-file", getenv("ACP_AGENT_MODELS_FILE"), "model pricing/context-window overrides (default $XDG_CONFIG_HOME/acp-agent/models.json if it exists; env ACP_AGENT_MODELS_FILE)")
	telemetryFile := fs.String("telemetry-file", getenv("ACP_AGENT_TELEMETRY_FILE"), "also append telemetry events to this file as JSON lines (env ACP_AGENT_TELEMETRY_FILE)")
	execState := fs.Bool("execution-state", envBool(getenv, "ACP_AGENT_EXECUTION_STATE"), "send execution_state_update and retry_update to every client (otherwise only to clients that opt in; env ACP_AGENT_EXECUTION_STATE)")
	promptTimeout := fs.Duration("prompt-timeout", envDuration(getenv, "ACP_AGENT_PROMPT_TIMEOUT"), "end a prompt turn that runs longer than this with an error (0: no limit; env ACP_AGENT_PROMPT_TIMEOUT)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: acp-agent [flags]\n\nacp-agent speaks the Agent Client Protocol on stdin/stdout; editors start it as a subprocess.\nEnvironment: OPENAI_API_KEY, OPENAI_BASE_URL (default https://api.openai.com/v1).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	if *showVersion {
		_, err := fmt.Fprintln(stdout, "acp-agent", version)
		return err
	}
	level, enabled, err := telemetry.ParseLevel(*logLevel)
	if err != nil {
		return err
	}
	logOut := stderr
	if *logFile != "" {
		f, err := telemetry.OpenLogFile(*logFile)
		if err != nil {
			return err
		}
		defer f.Close()
		logOut = f
	}
	log := telemetry.NewLogger(logOut, level, enabled)

	models, err := loadModels(*modelsFile, getenv)
	if err != nil {
		return err
	}
	// Telemetry goes to the log (stderr or --log-file) and, if asked, to a
	// JSONL file; never to stdout.
	sinks := []telemetry.Sink{telemetry.SlogSink{Logger: log}}
	if *telemetryFile != "" {
		jsonl, err := telemetry.OpenJSONL(*telemetryFile)
		if err != nil {
			return fmt.Errorf("telemetry file: %w", err)
		}
		defer jsonl.Close()
		sinks = append(sinks, jsonl)
	}
	recorder := telemetry.NewRecorder(sinks...)
	retry := agent.RetryPolicy{MaxRetries: *maxRetries}
	if *maxRetries == 0 {
		retry.MaxRetries = -1 // the flag's 0 means none; the policy's 0 means the default
	}
	if *promptTimeout < 0 {
		return fmt.Errorf("--prompt-timeout: must not be negative, got %v", *promptTimeout)
	}
	a := agent.New(agent.Config{Model: *model, Getenv: getenv, Logger: log, Version: version, Retry: retry, Models: models,
		Telemetry: recorder, ExecutionStates: *execState, PromptTimeout: *promptTimeout})
	svc := acp.NewAgentService(a, acp.Options{MaxMessageBytes: *maxLine, Logger: log})
	return svc.Serve(ctx, stdin, stdout)
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

func envDuration(getenv func(string) string, key string) time.Duration {
	d, err := time.ParseDuration(getenv(key))
	if err != nil {
		return 0
	}
	return d
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
