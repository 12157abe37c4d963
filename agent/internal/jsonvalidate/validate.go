package jsonvalidate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/mail"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxProblems bounds what one validation collects.
const maxProblems = 64

// Problem is one way a value broke its schema.
type Problem struct {
	// Path is the JSON Pointer of the offending value ("" for the root).
	Path string
	// Message says what was wrong, e.g. "expected integer, but got string".
	Message string
	own     bool // a keyword only the walk asserts (format, multipleOf)
}

// Error lists the problems of a value that does not match its schema,
// sorted by path.
type Error struct {
	Problems []Problem
	// Cause is the library's own error: its first problem only, located
	// in the schema rather than in the value. Nil when only a format or a
	// multipleOf was wrong.
	Cause error
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		path := p.Path
		if path == "" {
			path = "/"
		}
		parts[i] = "at " + path + ": " + p.Message
	}
	return strings.Join(parts, "; ")
}

func (e *Error) Unwrap() error { return e.Cause }

// Validate checks v, a value with encoding/json's types (float64, string,
// bool, nil, []any, map[string]any), against the schema. A failure is an
// *Error naming every problem the walk of the schema finds.
func (s *Schema) Validate(v any) error {
	if deeperThan(v, MaxDepth) {
		return &Error{Problems: []Problem{{Message: fmt.Sprintf("the value is nested more than %d levels deep", MaxDepth)}}}
	}
	if s.tooCostly(v, maxApplications) {
		return &Error{Problems: []Problem{{Message: fmt.Sprintf("checking the value against the schema would take more than %d steps", maxApplications)}}}
	}
	cause := s.resolved.Validate(v)
	if cause == nil && !s.ownChecks {
		return nil
	}
	w := walker{s: s}
	w.walk(v, s.root, "")
	problems := w.out
	if cause == nil {
		// The library does not assert formats and multipleOf: keep only
		// those problems.
		problems = slices.DeleteFunc(problems, func(p Problem) bool { return !p.own })
		if len(problems) == 0 {
			return nil
		}
	}
	if len(problems) == 0 {
		// A keyword the walk does not explain (unevaluatedProperties,
		// propertyNames, a dynamic reference): the library's words.
		problems = []Problem{{Message: clip(strings.ReplaceAll(cause.Error(), "\n", "; "), 300)}}
	}
	slices.SortStableFunc(problems, func(a, b Problem) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return &Error{Problems: slices.Compact(problems), Cause: cause}
}

// deeperThan reports whether v nests arrays and objects more than n deep.
func deeperThan(v any, n int) bool {
	switch x := v.(type) {
	case []any:
		if n == 0 {
			return true
		}
		for _, c := range x {
			if deeperThan(c, n-1) {
				return true
			}
		}
	case map[string]any:
		if n == 0 {
			return true
		}
		for _, c := range x {
			if deeperThan(c, n-1) {
				return true
			}
		}
	}
	return false
}

type walker struct {
	s   *Schema
	out []Problem
}

func (w *walker) add(path, format string, args ...any) {
	if len(w.out) < maxProblems {
		w.out = append(w.out, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
}

// clean reports whether v passes sc by the walk alone.
func (w *walker) clean(v any, sc *jsonschema.Schema, path string) ([]Problem, bool) {
	sub := walker{s: w.s}
	sub.walk(v, sc, path)
	return sub.out, len(sub.out) == 0
}

// walk adds every problem of v under sc. It mirrors the library's rules
// for the keywords tool and output schemas use; the library decides
// whether v is valid, the walk says where and why.
func (w *walker) walk(v any, sc *jsonschema.Schema, path string) {
	if sc == nil || len(w.out) >= maxProblems {
		return
	}
	if to := w.s.refs[sc]; to != nil {
		w.walk(v, to, path)
		if w.s.resolved.Schema().Schema == draft07 && sc.Ref != "" {
			return // draft-07: keywords beside $ref are ignored
		}
	}
	if sc.Not != nil && reflect.ValueOf(*sc.Not).IsZero() {
		w.add(path, "not allowed") // the schema false
		return
	}
	if !w.types(v, sc, path) {
		return
	}
	if sc.Enum != nil && !slices.ContainsFunc(sc.Enum, func(e any) bool { return equal(e, v) }) {
		vals := make([]string, len(sc.Enum))
		for i, e := range sc.Enum {
			vals[i] = show(e)
		}
		w.add(path, "value must be one of %s", strings.Join(vals, ", "))
	}
	if sc.Const != nil && !equal(*sc.Const, v) {
		w.add(path, "value must be %s", show(*sc.Const))
	}
	switch x := v.(type) {
	case float64:
		w.number(x, sc, path)
	case string:
		w.str(x, sc, path)
	case []any:
		w.array(x, sc, path)
	case map[string]any:
		w.object(x, sc, path)
	}
	for _, c := range sc.AllOf {
		w.walk(v, c, path)
	}
	if len(sc.AnyOf) > 0 {
		w.alternatives(v, sc.AnyOf, path, "anyOf", false)
	}
	if len(sc.OneOf) > 0 {
		w.alternatives(v, sc.OneOf, path, "oneOf", true)
	}
	if sc.Not != nil {
		if _, ok := w.clean(v, sc.Not, path); ok {
			w.add(path, "must not be valid against the schema in not")
		}
	}
	if sc.If != nil {
		if _, ok := w.clean(v, sc.If, path); ok {
			w.walk(v, sc.Then, path)
		} else {
			w.walk(v, sc.Else, path)
		}
	}
}

func (w *walker) types(v any, sc *jsonschema.Schema, path string) bool {
	want := sc.Types
	if sc.Type != "" {
		want = []string{sc.Type}
	}
	if len(want) == 0 {
		return true
	}
	got := typeOf(v)
	for _, t := range want {
		if t == got || t == "number" && got == "integer" {
			return true
		}
	}
	if got == "integer" {
		got = "number" // as a user says it: 7 is a number
	}
	w.add(path, "expected %s, but got %s", strings.Join(want, " or "), got)
	return false
}

func (w *walker) number(x float64, sc *jsonschema.Schema, path string) {
	if m, ok := w.s.multipleOf[sc]; ok && !multipleOf(x, m) {
		if len(w.out) < maxProblems {
			w.out = append(w.out, Problem{Path: path, Message: fmt.Sprintf("%v is not a multiple of %v", x, m), own: true})
		}
	}
	if m := sc.MultipleOf; m != nil {
		if _, f := math.Modf(x / *m); f != 0 { // as the library: see Schema.multipleOf
			w.add(path, "%v is not a multiple of %v", x, *m)
		}
	}
	if b := sc.Minimum; b != nil && x < *b {
		w.add(path, "must be >= %v but found %v", *b, x)
	}
	if b := sc.Maximum; b != nil && x > *b {
		w.add(path, "must be <= %v but found %v", *b, x)
	}
	if b := sc.ExclusiveMinimum; b != nil && x <= *b {
		w.add(path, "must be > %v but found %v", *b, x)
	}
	if b := sc.ExclusiveMaximum; b != nil && x >= *b {
		w.add(path, "must be < %v but found %v", *b, x)
	}
}

// multipleOf reports whether x is a whole multiple of m, both read as the
// shortest decimals that are those floats (as JSON text writes them: 0.07
// and 0.01), divided exactly.
func multipleOf(x, m float64) bool {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return false
	}
	var a, b big.Rat
	if _, ok := a.SetString(strconv.FormatFloat(x, 'g', -1, 64)); !ok {
		return false
	}
	if _, ok := b.SetString(strconv.FormatFloat(m, 'g', -1, 64)); !ok || b.Sign() == 0 {
		return false
	}
	return a.Quo(&a, &b).IsInt()
}

func (w *walker) str(x string, sc *jsonschema.Schema, path string) {
	n := utf8.RuneCountInString(x)
	if m := sc.MinLength; m != nil && n < *m {
		w.add(path, "length must be >= %d, but got %d", *m, n)
	}
	if m := sc.MaxLength; m != nil && n > *m {
		w.add(path, "length must be <= %d, but got %d", *m, n)
	}
	if sc.Pattern != "" {
		// The library compiled it already; the walk runs only on bad values.
		if re, err := regexp.Compile(sc.Pattern); err == nil && !re.MatchString(x) {
			w.add(path, "%s does not match pattern %q", show(x), sc.Pattern)
		}
	}
	if sc.Format != "" && !formatOK(sc.Format, x) {
		if len(w.out) < maxProblems {
			w.out = append(w.out, Problem{Path: path, Message: fmt.Sprintf("%s is not a valid %s", show(x), sc.Format), own: true})
		}
	}
}

func (w *walker) array(x []any, sc *jsonschema.Schema, path string) {
	prefix := sc.PrefixItems
	rest := sc.Items
	if sc.ItemsArray != nil { // draft-07 tuple
		prefix, rest = sc.ItemsArray, sc.AdditionalItems
	}
	for i, item := range x {
		p := fmt.Sprintf("%s/%d", path, i)
		if i < len(prefix) {
			w.walk(item, prefix[i], p)
		} else {
			w.walk(item, rest, p)
		}
	}
	if m := sc.MinItems; m != nil && len(x) < *m {
		w.add(path, "minimum %d items required, but found %d items", *m, len(x))
	}
	if m := sc.MaxItems; m != nil && len(x) > *m {
		w.add(path, "maximum %d items allowed, but found %d items", *m, len(x))
	}
	if sc.UniqueItems {
	unique:
		for i := range x {
			for j := range i {
				if equal(x[i], x[j]) {
					w.add(path, "items at index %d and %d are equal", j, i)
					break unique
				}
			}
		}
	}
	if sc.Contains != nil && (sc.MinContains == nil || *sc.MinContains > 0) {
		if !slices.ContainsFunc(x, func(item any) bool { _, ok := w.clean(item, sc.Contains, path); return ok }) {
			w.add(path, "no item matches the schema in contains")
		}
	}
}

func (w *walker) object(x map[string]any, sc *jsonschema.Schema, path string) {
	var missing []string
	for _, r := range sc.Required {
		if _, ok := x[r]; !ok {
			missing = append(missing, "'"+r+"'")
		}
	}
	if missing != nil {
		w.add(path, "missing properties: %s", strings.Join(missing, ", "))
	}
	for k, deps := range sc.DependentRequired {
		if _, ok := x[k]; ok {
			for _, d := range deps {
				if _, ok := x[d]; !ok {
					w.add(path, "property '%s' is required when '%s' is present", d, k)
				}
			}
		}
	}
	if m := sc.MinProperties; m != nil && len(x) < *m {
		w.add(path, "minimum %d properties required, but found %d", *m, len(x))
	}
	if m := sc.MaxProperties; m != nil && len(x) > *m {
		w.add(path, "maximum %d properties allowed, but found %d", *m, len(x))
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var extra []string
	for _, k := range keys {
		p := path + "/" + escape(k)
		known := false
		if c, ok := sc.Properties[k]; ok {
			known = true
			w.walk(x[k], c, p)
		}
		for pat, c := range sc.PatternProperties {
			if re, err := regexp.Compile(pat); err == nil && re.MatchString(k) {
				known = true
				w.walk(x[k], c, p)
			}
		}
		if known || sc.AdditionalProperties == nil {
			continue
		}
		if a := sc.AdditionalProperties; a.Not != nil && reflect.ValueOf(*a.Not).IsZero() {
			extra = append(extra, "'"+k+"'")
		} else {
			w.walk(x[k], a, p)
		}
	}
	if extra != nil {
		w.add(path, "additionalProperties %s not allowed", strings.Join(extra, ", "))
	}
	for k, c := range sc.DependentSchemas {
		if _, ok := x[k]; ok {
			w.walk(x, c, path)
		}
	}
}

// alternatives reports a value that matches none of anyOf's or oneOf's
// schemas (or, for oneOf, more than one), with each alternative's first
// problem.
func (w *walker) alternatives(v any, alts []*jsonschema.Schema, path, kw string, one bool) {
	var passed []int
	var why []string
	for i, c := range alts {
		probs, ok := w.clean(v, c, path)
		if ok {
			passed = append(passed, i)
			continue
		}
		p := probs[0]
		msg := p.Message
		if p.Path != path {
			msg = "at " + p.Path + ": " + msg
		}
		why = append(why, msg)
	}
	switch {
	case len(passed) == 0:
		w.add(path, "does not match any of %s's %d schemas (%s)", kw, len(alts), strings.Join(why, " | "))
	case one && len(passed) > 1:
		w.add(path, "matches %s's schemas %d and %d; it must match exactly one", kw, passed[0], passed[1])
	}
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// equal compares JSON values (the schema's, possibly of other Go numeric
// types, and the instance's) by their JSON encoding.
func equal(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// show is a value as JSON, shortened: messages go to a model.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b), 80)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// hostnameRE is compiled on first use: nothing at package init.
var hostnameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$`)
})

// formatOK asserts the common formats; others are annotations.
// leapSecond reads a time's second 60 (RFC 3339 allows it, in the last
// minute of an hour in some offset; time.Parse does not) as 59; the time
// starts at index at of x.
func leapSecond(x string, at int) string {
	if len(x) >= at+8 && x[at+3:at+5] == "59" && x[at+6:at+8] == "60" {
		return x[:at+6] + "59" + x[at+8:]
	}
	return x
}

func formatOK(format, x string) bool {
	switch format {
	case "date-time":
		_, err := time.Parse(time.RFC3339Nano, strings.Replace(strings.Replace(leapSecond(x, 11), "t", "T", 1), "z", "Z", 1))
		return err == nil
	case "date":
		_, err := time.Parse(time.DateOnly, x)
		return err == nil
	case "time":
		_, err := time.Parse("15:04:05Z07:00", strings.ToUpper(leapSecond(x, 0)))
		if err != nil {
			_, err = time.Parse("15:04:05.999999999Z07:00", strings.ToUpper(leapSecond(x, 0)))
		}
		return err == nil
	case "email":
		a, err := mail.ParseAddress(x)
		return err == nil && a.Address == x
	case "hostname":
		return len(x) <= 253 && hostnameRE().MatchString(x)
	case "ipv4":
		a, err := netip.ParseAddr(x)
		return err == nil && a.Is4()
	case "ipv6":
		a, err := netip.ParseAddr(x)
		return err == nil && a.Is6() && a.Zone() == "" // RFC 4291: no zone
	case "uri":
		u, err := url.Parse(x)
		return err == nil && u.Scheme != ""
	case "uuid":
		return len(x) == 36 && x[8] == '-' && x[13] == '-' && x[18] == '-' && x[23] == '-' &&
			strings.Trim(strings.ReplaceAll(strings.ToLower(x), "-", ""), "0123456789abcdef") == ""
	case "regex":
		_, err := regexp.Compile(x)
		return err == nil
	}
	return true
}
