package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/pricing"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// doctorTimeout bounds the model endpoint check.
const doctorTimeout = 5 * time.Second

// doctorTools are the tools doctor looks for on the commands' PATH.
var doctorTools = []string{"go", "node", "python3", "cargo", "git", "make"}

// runDoctor is "acp-agent doctor": it checks the setup an editor would
// start the agent with (the same flags, environment and config file) and
// prints one line per check on stdout. It exits 1 when something must be
// fixed before sessions work.
func runDoctor(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	var offline bool
	// The editor mode's settings: what acp-agent login stored included.
	st, err := parseSettings("acp-agent doctor", args, stdout, stderr, withCredentials(os.Getenv), func(fs *flag.FlagSet) {
		fs.BoolVar(&offline, "offline", false, "do not contact the model's server (the endpoint check is skipped)")
	})
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{exitUsage, err}
	}
	if st.fs.NArg() > 0 {
		return &exitError{exitUsage, fmt.Errorf("unexpected argument %q (see acp-agent doctor --help)", st.fs.Arg(0))}
	}
	if st.version {
		return printVersion(stdout)
	}
	d := &doctor{out: stdout}
	fmt.Fprintf(stdout, "acp-agent %s\n", agentVersion())

	// The config file.
	cfgPath := st.fs.Lookup("config").Value.String()
	if cfgPath == "" {
		cfgPath = defaultConfigPath(st.getenv)
	}
	switch _, statErr := os.Stat(cfgPath); {
	case st.configErr != nil:
		d.fail("config", st.configErr.Error())
	case cfgPath == "" || errors.Is(statErr, os.ErrNotExist):
		d.ok("config", "no config file (defaults; "+cfgPath+" would be read)")
	default:
		d.ok("config", cfgPath)
	}

	// The model: a key, a valid spec, and its server answering.
	models, err := loadModels(st.modelsFile, st.getenv)
	if err != nil {
		d.fail("models", err.Error())
		models = pricing.Default()
	}
	h := host.New(host.Config{Model: st.model, Choices: st.choices, Getenv: st.getenv, Models: models,
		Logger: slog.New(slog.DiscardHandler)})
	p := h.ProbeModel(ctx, offline, doctorTimeout)
	h.Close()
	switch {
	case p.Unusable != nil:
		d.fail("model", fmt.Sprintf("%s: %v", p.Spec, p.Unusable))
	case p.NoServer:
		d.ok("model", p.Spec+" (offline: it needs no key and no server)")
	case offline:
		d.skip("model", p.Spec+": key set; the endpoint ("+p.Server+") was not contacted (--offline)")
	case p.Err != nil:
		d.fail("model", fmt.Sprintf("%s: the endpoint %s did not answer with its key: %v", p.Spec, p.Server, p.Err))
	default:
		d.ok("model", fmt.Sprintf("%s: %s answered with its key (%d models listed, %s)", p.Spec, p.Server, p.Models, p.Took.Round(time.Millisecond)))
	}

	// The session directory.
	if st.sessionDir == "" {
		d.warn("sessions", "no session directory (set --session-dir, XDG_STATE_HOME or HOME): sessions are not saved")
	} else if store, err := persistence.OpenStore(st.sessionDir); err != nil {
		d.fail("sessions", err.Error())
	} else if f, err := os.CreateTemp(store.Dir(), ".doctor-*"); err != nil {
		d.fail("sessions", fmt.Sprintf("%s is not writable: %v", store.Dir(), err))
	} else {
		f.Close()
		os.Remove(f.Name())
		page, _ := store.List(persistence.ListOptions{Limit: 1000, Archived: persistence.ArchivedInclude})
		d.ok("sessions", fmt.Sprintf("%s (writable, %d saved)", store.Dir(), len(page.Sessions)))
	}

	// The sandbox.
	mode := *st.sandboxFlags.mode
	if mode == "" && st.sandboxFile != nil {
		mode = st.sandboxFile.Mode
	}
	switch sb := sandbox.Probe(); {
	case mode == "off":
		d.warn("sandbox", "off (--sandbox off or the config): commands run unconfined, after your approval")
	case sb.Available:
		if sb.Mechanism != "" {
			d.ok("sandbox", sb.String()) // not Landlock (macOS)
			break
		}
		// One confined command, as sessions run them, says what holds.
		masked, err := sandboxSelfCheck()
		switch {
		case err != nil:
			d.fail("sandbox", sb.String()+"; a confined command in a scratch workspace: "+err.Error())
		case sb.Masks != "" && !masked:
			d.warn("sandbox", fmt.Sprintf("available (Landlock ABI %d, seccomp), limited: the helpers could not mask by mount here "+
				"(a container's seccomp profile or a security module refusing user namespaces?), so nothing new can be created "+
				"directly in a directory holding .git or a .env file", sb.ABI))
		case sb.Limit != "":
			d.warn("sandbox", sb.String())
		default:
			d.ok("sandbox", sb.String()+"; checked: a confined command made a file beside .git and .env and could not read the .env")
		}
	case unconfinedByDesign:
		d.warn("sandbox", platformSandboxNote()) // Windows (platform.go)
	default:
		d.warn("sandbox", sb.String()+": commands are not confined, so every command asks")
	}

	// The PATH commands get, and the tools on it.
	up := newUserPath(st.getenv, st.terminal, slog.New(slog.DiscardHandler))
	cwd, _ := os.Getwd()
	path, dropped := up.commandPathIn(cwd)
	up.wait()
	d.ok("PATH", path+" (from "+up.source+")")
	for _, dr := range dropped {
		entry := dr.Entry
		if entry == "" {
			entry = "(empty)"
		}
		fmt.Fprintf(stdout, "%-10s          left out: %s: %s\n", "", entry, dr.Reason)
	}
	if up.note != "" {
		d.warn("PATH", up.note)
	}
	var found, missing []string
	for _, t := range doctorTools {
		if p, ok := lookIn(path, t); ok {
			found = append(found, t+" "+p)
		} else {
			missing = append(missing, t)
		}
	}
	line := strings.Join(found, ", ")
	if len(missing) > 0 {
		line += "; not found: " + strings.Join(missing, ", ")
	}
	d.ok("tools", line)

	if d.failed > 0 {
		fmt.Fprintf(stdout, "\n%d problem(s) to fix before sessions work.\n", d.failed)
		return &exitError{code: exitError1, err: errSilent}
	}
	fmt.Fprintln(stdout, "\nEverything the agent needs is in place.")
	return nil
}

// doctor prints the checks' lines.
type doctor struct {
	out    io.Writer
	failed int
}

func (d *doctor) line(mark, name, text string) {
	fmt.Fprintf(d.out, "%-10s %-6s %s\n", name, mark, text)
}
func (d *doctor) ok(name, text string)   { d.line("ok", name, text) }
func (d *doctor) warn(name, text string) { d.line("warn", name, text) }
func (d *doctor) skip(name, text string) { d.line("skip", name, text) }
func (d *doctor) fail(name, text string) {
	d.failed++
	d.line("FAIL", name, text)
}
