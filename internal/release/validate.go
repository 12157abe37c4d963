package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Validate checks an agent.json and its icon.svg against the ACP
// registry's rules (github.com/agentclientprotocol/registry: its
// agent.schema.json and the checks of its build script, as of 2026):
// required members, the id pattern and the directory name, an x.y.z
// version, binary targets only for the six platforms with archive and
// cmd (sha256 optional, 64 hex digits; nothing else), archive URLs that
// are absolute, not installers, not "latest" and of this version; and an
// icon that is 16x16, square and drawn in currentColor only. dir is the
// registry directory the entry would live in ("acp-agent").
func Validate(agentJSON, icon []byte, dir string) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	var e map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(agentJSON))
	if err := dec.Decode(&e); err != nil {
		return fmt.Errorf("agent.json: %w", err)
	}
	str := func(key string) (string, bool) {
		raw, ok := e[key]
		if !ok {
			return "", false
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			bad("%s must be a string", key)
			return "", false
		}
		return s, true
	}
	for _, k := range []string{"id", "name", "version", "description", "distribution"} {
		if _, ok := e[k]; !ok {
			bad("%s is required", k)
		}
	}
	id, _ := str("id")
	if !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(id) {
		bad("id %q: lowercase letters, digits and hyphens, starting with a letter", id)
	}
	if id != dir {
		bad("id %q must match the directory name %q", id, dir)
	}
	for _, k := range []string{"name", "description"} {
		if s, ok := str(k); ok && s == "" {
			bad("%s must not be empty", k)
		}
	}
	version, _ := str("version")
	if !semver.MatchString(version) {
		bad("version %q is not x.y.z with numeric parts", version)
	}
	for _, k := range []string{"repository", "website", "license_url"} {
		if s, ok := str(k); ok && !absoluteURL(s) {
			bad("%s %q is not an absolute URL", k, s)
		}
	}
	if raw, ok := e["authors"]; ok {
		var a []string
		if json.Unmarshal(raw, &a) != nil {
			bad("authors must be an array of strings")
		}
	}
	str("license")
	str("icon")

	var dist map[string]json.RawMessage
	if raw, ok := e["distribution"]; ok {
		if json.Unmarshal(raw, &dist) != nil || len(dist) == 0 {
			bad("distribution must be an object with at least one method")
		}
	}
	for k := range dist {
		if k != "binary" && k != "npx" && k != "uvx" {
			bad("distribution.%s is not a distribution method (binary, npx, uvx)", k)
		}
	}
	if raw, ok := dist["binary"]; ok {
		errs = append(errs, validateBinary(raw, version)...)
	}
	errs = append(errs, ValidateIcon(icon)...)
	return errors.Join(errs...)
}

var platforms = []string{"darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64", "windows-aarch64", "windows-x86_64"}

func validateBinary(raw json.RawMessage, version string) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	var bin map[string]map[string]json.RawMessage
	if json.Unmarshal(raw, &bin) != nil || len(bin) == 0 {
		return []error{errors.New("distribution.binary must map platforms to targets")}
	}
	for plat, t := range bin {
		where := "distribution.binary." + plat
		if !slices.Contains(platforms, plat) {
			bad("%s: unknown platform (%s)", where, strings.Join(platforms, ", "))
		}
		for k := range t {
			if !slices.Contains([]string{"archive", "sha256", "cmd", "args", "env"}, k) {
				bad("%s.%s is not allowed", where, k)
			}
		}
		var archive, cmd, sum string
		if json.Unmarshal(t["archive"], &archive) != nil || archive == "" {
			bad("%s.archive is required", where)
		}
		if json.Unmarshal(t["cmd"], &cmd) != nil || cmd == "" {
			bad("%s.cmd is required", where)
		}
		if s, ok := t["sha256"]; ok && (json.Unmarshal(s, &sum) != nil || !regexp.MustCompile(`^[a-fA-F0-9]{64}$`).MatchString(sum)) {
			bad("%s.sha256 must be 64 hex digits", where)
		}
		if a, ok := t["args"]; ok {
			var args []string
			if json.Unmarshal(a, &args) != nil {
				bad("%s.args must be an array of strings", where)
			}
		}
		if v, ok := t["env"]; ok {
			var env map[string]string
			if json.Unmarshal(v, &env) != nil {
				bad("%s.env must map names to strings", where)
			}
		}
		if archive == "" {
			continue
		}
		if !absoluteURL(archive) {
			bad("%s.archive %q is not an absolute URL", where, archive)
		}
		lower := strings.ToLower(archive)
		for _, ext := range []string{".dmg", ".pkg", ".deb", ".rpm", ".msi", ".appimage"} {
			if strings.HasSuffix(lower, ext) {
				bad("%s.archive: installer format %s is not supported", where, ext)
			}
		}
		if strings.Contains(archive, "/latest/") {
			bad("%s.archive uses /latest/: name the version", where)
		}
		if m := regexp.MustCompile(`/(?:download|releases)/v?([\d.]+)/`).FindStringSubmatch(archive); m != nil && normalizeVersion(m[1]) != version {
			bad("%s.archive is of version %s, the entry of %s", where, normalizeVersion(m[1]), version)
		}
	}
	return errs
}

func normalizeVersion(v string) string {
	parts := strings.Split(v, ".")
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	return strings.Join(parts[:3], ".")
}

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && u.Host != ""
}

// ValidateIcon applies the registry's icon rules: width and height (or
// the viewBox) 16 and equal; every fill and stroke, as an attribute or in
// a style, currentColor, none or inherit; currentColor used.
func ValidateIcon(icon []byte) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("icon.svg: "+format, args...)) }
	s := string(icon)
	if !strings.Contains(s, "<svg") {
		return []error{errors.New("icon.svg: not an SVG")}
	}
	var w, h float64
	wm := regexp.MustCompile(`<svg[^>]*\swidth=["'](\d+)`).FindStringSubmatch(s)
	hm := regexp.MustCompile(`<svg[^>]*\sheight=["'](\d+)`).FindStringSubmatch(s)
	if wm != nil && hm != nil {
		w, _ = strconv.ParseFloat(wm[1], 64)
		h, _ = strconv.ParseFloat(hm[1], 64)
	} else if vb := regexp.MustCompile(`viewBox=["'][\d.]+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)`).FindStringSubmatch(s); vb != nil {
		w, _ = strconv.ParseFloat(vb[1], 64)
		h, _ = strconv.ParseFloat(vb[2], 64)
	} else {
		bad("no width and height, and no viewBox")
	}
	if w != h {
		bad("not square (%vx%v)", w, h)
	}
	if w != 16 || h != 16 {
		bad("must be 16x16 (is %vx%v)", w, h)
	}
	allowed := []string{"currentcolor", "none", "inherit"}
	for _, attr := range []string{"fill", "stroke"} {
		for _, m := range regexp.MustCompile(`(?i)\b`+attr+`\s*=\s*["']([^"']+)["']`).FindAllStringSubmatch(s, -1) {
			if !slices.Contains(allowed, strings.ToLower(strings.TrimSpace(m[1]))) {
				bad("hard-coded %s=%q (use currentColor or none)", attr, m[1])
			}
		}
		for _, m := range regexp.MustCompile(`(?i)\b`+attr+`\s*:\s*([^;"']+)`).FindAllStringSubmatch(s, -1) {
			if !slices.Contains(allowed, strings.ToLower(strings.TrimSpace(m[1]))) {
				bad("hard-coded style %s: %s", attr, strings.TrimSpace(m[1]))
			}
		}
	}
	if !regexp.MustCompile(`(?i)currentColor`).MatchString(s) {
		bad("must use currentColor")
	}
	return errs
}
