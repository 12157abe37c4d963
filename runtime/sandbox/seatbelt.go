package sandbox

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/policy"
)

// SeatbeltProfile is the macOS Seatbelt profile (SBPL, the language of
// /usr/bin/sandbox-exec -p) that confines a command as Policy says, the
// same grants the Landlock rules give on Linux:
//
//   - reads everywhere except the denied paths (and what is below them);
//   - writes only in the writable roots (not their .git unless
//     AllowGitWrites), the extra writable paths and the temporary
//     directory, never in a denied or protected path, plus a few character devices
//     (/dev/null, ...);
//   - network only when Network is set;
//   - signals and process inspection only within the sandbox.
//
// The profile starts with (deny default) and has allow rules only, with
// exclusions written as require-not inside each rule, so what it grants
// does not depend on rule order (SBPL lets the last matching rule win).
//
// Seatbelt matches the path the kernel resolved, so the caller passes
// real paths (SeatbeltPolicy resolves them). Denied paths and .git are
// matched case-insensitively as well, for case-insensitive volumes.
//
// The profile is a pure function of p: golden files pin it. It has not
// been run on macOS by this repository's tests, which run on Linux.
func SeatbeltProfile(p Policy) (string, error) {
	for _, list := range [][]string{p.WritableRoots, p.ExtraWritable, p.DeniedPaths, p.ProtectedPaths, {p.TempDir}} {
		for _, x := range list {
			if x == "" {
				continue
			}
			if err := sbplPathOK(x); err != nil {
				return "", err
			}
		}
	}
	denied, protected := cleanAll(p.DeniedPaths), cleanAll(p.ProtectedPaths)
	var b strings.Builder
	b.WriteString(seatbeltBase)

	roots := cleanAll(p.WritableRoots)
	b.WriteString("\n; Reads: everything except the denied paths and the roots' .env files.\n(allow file-read*\n  (require-all\n    (subpath \"/\")")
	for _, d := range denied {
		fmt.Fprintf(&b, "\n    (require-not %s)", ciPathRegex(d))
	}
	for _, r := range roots {
		fmt.Fprintf(&b, "\n    (require-not %s)", envFilesFilter(r))
	}
	b.WriteString("))\n")

	b.WriteString("\n; Writes: the workspace roots")
	if !p.AllowGitWrites {
		b.WriteString(" (their .git read-only)")
	}
	b.WriteString(", the extra writable paths and the temporary directory.\n")
	writable := func(dir string, extra ...string) {
		fmt.Fprintf(&b, "(allow file-write*\n  (require-all\n    (subpath %s)", sbplString(dir))
		for _, x := range extra {
			fmt.Fprintf(&b, "\n    (require-not %s)", x)
		}
		for _, d := range denied {
			fmt.Fprintf(&b, "\n    (require-not %s)", ciPathRegex(d))
		}
		for _, r := range roots {
			if within(r, dir) || within(dir, r) {
				fmt.Fprintf(&b, "\n    (require-not %s)", envFilesFilter(r))
			}
		}
		// Protected paths stay readable, never written or created.
		for _, x := range protected {
			fmt.Fprintf(&b, "\n    (require-not %s)", ciPathRegex(x))
		}
		b.WriteString("))\n")
	}
	for _, r := range roots {
		if p.AllowGitWrites {
			writable(r)
			continue
		}
		git := path.Join(r, ".git")
		writable(r, "(subpath "+sbplString(git)+")", ciPathRegex(git))
	}
	others := cleanAll(p.ExtraWritable)
	if p.TempDir != "" {
		others = append(others, path.Clean(p.TempDir))
	}
	for _, w := range others {
		if denied := deniedOverlap(w, denied); denied {
			continue // as on Linux: a writable path that holds or is in a secret is skipped
		}
		writable(w)
	}

	b.WriteString("\n; Network.\n")
	if p.Network {
		b.WriteString(seatbeltNetwork)
	} else {
		b.WriteString("; off: no network rule, so (deny default) refuses every socket.\n")
	}
	return b.String(), nil
}

// seatbeltBase is what every confined command may do whatever its policy:
// run and fork programs, signal and inspect processes of its own sandbox,
// read system information, use a pseudo-terminal and write to the null
// devices.
const seatbeltBase = `(version 1)
; acp-agent: generated from the sandbox policy (runtime/sandbox/seatbelt.go).
(deny default)

; Programs and their children run under this same profile.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))

; System information toolchains ask for (CPU count, OS version, user names).
(allow sysctl-read)
(allow mach-host*)
(allow user-preference-read)
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))
(allow ipc-posix-sem)
(allow pseudo-tty)

; Devices.
(allow file-read* file-write-data file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/tty")
  (literal "/dev/ptmx")
  (literal "/dev/random")
  (literal "/dev/urandom")
  (regex #"^/dev/ttys[0-9]+$"))
`

// seatbeltNetwork lets the command use the network: sockets, and the
// system services name resolution and TLS verification go through.
const seatbeltNetwork = `(allow network*)
(allow system-socket)
(allow mach-lookup
  (global-name "com.apple.dnssd.service")
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.trustd")
  (global-name "com.apple.trustd.agent"))
`

// sbplPathOK refuses what the profile cannot say exactly: relative
// paths, and quotes, backslashes or control characters, which would need
// escaping rules SBPL does not document.
func sbplPathOK(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("seatbelt: %q is not an absolute path", p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			return fmt.Errorf("seatbelt: path %q has a character the profile cannot hold", p)
		}
	}
	return nil
}

func sbplString(s string) string { return `"` + s + `"` }

// ciPathRegex matches p and everything below it, letters in any case.
func ciPathRegex(p string) string {
	return `(regex #"^` + ciRegex(p) + `(/|$)")`
}

// envFileTemplates are the .env.<name> files projects commit on purpose
// (policy.EnvFileName allows them).
var envFileTemplates = []string{"example", "sample", "template", "dist"}

// envFilesFilter matches the secrets files under root as policy.EnvFileName
// names them — .env and .env.<anything> at any depth, in any case, the
// templates excepted — the files the Linux sandbox masks. Only the file
// itself: Seatbelt cannot tell a file from a directory by name, so a .env
// directory (a virtualenv) cannot be listed or created either, but what
// is inside it stays readable.
func envFilesFilter(root string) string {
	under := "^" + ciRegex(root) + "/(.*/)?" + ciRegex(".env")
	templates := make([]string, len(envFileTemplates))
	for i, t := range envFileTemplates {
		templates[i] = ciRegex(t)
	}
	return `(require-all (regex #"` + under + `(\.[^/]+)?$") (require-not (regex #"` + under + `\.(` + strings.Join(templates, "|") + `)$")))`
}

// ciRegex is p as an SBPL regex matching it with its letters in any case
// (case-insensitive volumes: APFS, HFS+): [Aa] for ASCII letters, an
// alternation of the case forms of other letters ((É|é); the regex
// engine may read bytes, so no multibyte character goes in brackets),
// regex operators escaped.
func ciRegex(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			lo, up := strings.ToLower(string(r)), strings.ToUpper(string(r))
			b.WriteString("[" + up + lo + "]")
		case strings.ContainsRune(`.^$*+?()[]{}|`, r):
			b.WriteString(`\` + string(r))
		case r >= utf8.RuneSelf && unicode.SimpleFold(r) != r:
			forms := []string{string(r)}
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				forms = append(forms, string(f))
			}
			slices.Sort(forms)
			b.WriteString("(" + strings.Join(forms, "|") + ")")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func cleanAll(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if p != "" {
			out = append(out, path.Clean(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// deniedOverlap reports whether w is a denied path, inside one, or holds
// one.
func deniedOverlap(w string, denied []string) bool {
	for _, d := range denied {
		if within(d, w) || within(w, d) {
			return true
		}
	}
	return false
}

// errNoSeatbelt is what a Launcher returns where sandbox-exec is missing.
var errNoSeatbelt = errors.New("sandbox: /usr/bin/sandbox-exec is missing")

// SeatbeltPolicy is p with its paths as Seatbelt sees them: the
// writable paths resolved to their real paths (a missing one is kept as
// it is), the denied paths both as given and resolved, so that no
// symlinked spelling of a secret's directory reaches it (as the Landlock
// rules do on Linux). evalSymlinks is filepath.EvalSymlinks outside
// tests.
func SeatbeltPolicy(p Policy, evalSymlinks func(string) (string, error)) Policy {
	real := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, x := range ps {
			out[i] = x
			if r, err := evalSymlinks(x); err == nil {
				out[i] = r
			}
		}
		return out
	}
	q := p
	q.WritableRoots = real(p.WritableRoots)
	q.ExtraWritable = real(p.ExtraWritable)
	q.DeniedPaths = append(slices.Clone(p.DeniedPaths), real(p.DeniedPaths)...)
	q.ProtectedPaths = append(slices.Clone(p.ProtectedPaths), real(p.ProtectedPaths)...)
	// Where a missing one would be created (through a symlinked parent
	// or a dangling link), as the Landlock rules do: a missing denied
	// path is not created either.
	for _, x := range p.ProtectedPaths {
		if r := policy.RealPath(path.Clean(x)); !slices.Contains(q.ProtectedPaths, r) {
			q.ProtectedPaths = append(q.ProtectedPaths, r)
		}
	}
	for _, x := range p.DeniedPaths {
		if r := policy.RealPath(path.Clean(x)); !slices.Contains(q.DeniedPaths, r) {
			q.DeniedPaths = append(q.DeniedPaths, r)
		}
	}
	if p.TempDir != "" {
		q.TempDir = real([]string{p.TempDir})[0]
	}
	return q
}
