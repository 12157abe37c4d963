package pricing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// file is the top level of a models file.
type file struct {
	Version  *int              `json:"version"`
	Updated  string            `json:"updated"`
	Currency string            `json:"currency"`
	Source   string            `json:"source"`
	Models   []json.RawMessage `json:"models"`
}

// Load reads and parses the models file at path. A missing file yields an
// error that matches fs.ErrNotExist, so a caller can tell "no override"
// from "bad override".
func Load(path string) (*Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("pricing: %s: %w", path, err)
	}
	return t, nil
}

// Parse parses a models file (format in docs/pricing.md). It is strict:
// an unknown field, a negative price or limit, a missing provider or
// model, an unsupported version, and two entries (or aliases) naming the
// same provider/model are errors, and an error about an entry names its
// index and, when known, its provider/model.
func Parse(data []byte) (*Table, error) {
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	return t, nil
}

func parse(data []byte) (*Table, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, describeJSONError(data, err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the top-level object")
	}
	if err := checkFieldNames(data, fileFields(), " at top level"); err != nil {
		return nil, err
	}
	switch {
	case f.Version == nil:
		return nil, fmt.Errorf(`missing "version" (want %d)`, FormatVersion)
	case *f.Version != FormatVersion:
		return nil, fmt.Errorf(`unsupported "version" %d (want %d)`, *f.Version, FormatVersion)
	}
	if f.Updated != "" {
		if _, err := time.Parse(time.DateOnly, f.Updated); err != nil {
			return nil, fmt.Errorf(`"updated" %q is not a YYYY-MM-DD date`, f.Updated)
		}
	}
	currency := f.Currency
	if currency == "" {
		currency = DefaultCurrency
	} else if !isCurrencyCode(currency) {
		return nil, fmt.Errorf(`"currency" %q is not a three-letter upper-case code such as USD`, currency)
	}

	t := &Table{
		updated: f.Updated,
		source:  f.Source,
		models:  make([]Model, 0, len(f.Models)),
		byID:    make(map[key]int, len(f.Models)),
		byAlias: make(map[key]int),
	}
	for i, raw := range f.Models {
		m, err := parseEntry(raw)
		if err != nil {
			return nil, fmt.Errorf("models[%d]%s: %w", i, label(raw), err)
		}
		m.Currency = currency
		if err := t.add(i, m); err != nil {
			return nil, fmt.Errorf("models[%d] (%s): %w", i, m.Name(), err)
		}
	}
	return t, nil
}

// add appends entry i, rejecting ids and aliases an earlier entry of the
// same provider already uses.
func (t *Table) add(i int, m Model) error {
	k := keyOf(m.Provider, m.ID)
	if j, ok := t.byID[k]; ok {
		return fmt.Errorf("duplicate of models[%d]", j)
	}
	if j, ok := t.byAlias[k]; ok {
		return fmt.Errorf("model %q is already an alias of models[%d] (%s)", m.ID, j, t.models[j].Name())
	}
	for _, a := range m.Aliases {
		ak := keyOf(m.Provider, a)
		if j, ok := t.byID[ak]; ok {
			return fmt.Errorf("alias %q is already the model of models[%d]", a, j)
		}
		if j, ok := t.byAlias[ak]; ok {
			return fmt.Errorf("alias %q is already an alias of models[%d] (%s)", a, j, t.models[j].Name())
		}
	}
	t.models = append(t.models, m)
	t.byID[k] = i
	for _, a := range m.Aliases {
		t.byAlias[keyOf(m.Provider, a)] = i
	}
	return nil
}

// parseEntry decodes and validates one entry of "models".
func parseEntry(raw json.RawMessage) (Model, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return Model{}, errors.New("entry is null")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var m Model
	if err := dec.Decode(&m); err != nil {
		return Model{}, describeJSONError(nil, err)
	}
	if err := checkFieldNames(raw, modelFields(), ""); err != nil {
		return Model{}, err
	}
	if m.Provider == "" || strings.TrimSpace(m.Provider) != m.Provider || strings.Contains(m.Provider, "/") {
		return Model{}, fmt.Errorf(`"provider" %q must be a non-empty name without surrounding spaces or "/"`, m.Provider)
	}
	m.Provider = strings.ToLower(m.Provider)
	if m.ID == "" || strings.TrimSpace(m.ID) != m.ID {
		return Model{}, fmt.Errorf(`"model" %q must be a non-empty id without surrounding spaces`, m.ID)
	}
	seen := map[string]bool{m.ID: true}
	for _, a := range m.Aliases {
		if a == "" || strings.TrimSpace(a) != a {
			return Model{}, fmt.Errorf(`alias %q must be a non-empty id without surrounding spaces`, a)
		}
		if seen[a] {
			return Model{}, fmt.Errorf(`alias %q repeats the model or another alias`, a)
		}
		seen[a] = true
	}
	for _, c := range []struct {
		field string
		v     float64
	}{
		{"contextWindow", float64(m.ContextTokens)},
		{"maxInputTokens", float64(m.MaxInputTokens)},
		{"maxOutputTokens", float64(m.MaxOutputTokens)},
		{"inputPerMTok", m.InputPerMTok},
		{"outputPerMTok", m.OutputPerMTok},
		{"cacheReadPerMTok", m.CacheReadPerMTok},
		{"cacheWritePerMTok", m.CacheWritePerMTok},
	} {
		if c.v < 0 {
			return Model{}, fmt.Errorf("%q is negative (%v); leave it out when unknown", c.field, c.v)
		}
	}
	return m, nil
}

// label returns " (provider/model)" for an entry whose provider and model
// can be read, else "".
func label(raw json.RawMessage) string {
	var id struct {
		Provider string `json:"provider"`
		Model    string `json:"model"`
	}
	if json.Unmarshal(raw, &id) != nil || id.Provider == "" || id.Model == "" {
		return ""
	}
	return " (" + strings.ToLower(id.Provider) + "/" + id.Model + ")"
}

// describeJSONError rewrites encoding/json's errors: without the "json: "
// prefix, and with a line and column for syntax errors when data is known.
func describeJSONError(data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) && data != nil {
		line, col := position(data, syn.Offset)
		return fmt.Errorf("line %d, column %d: %s", line, col, syn.Error())
	}
	if errors.Is(err, io.EOF) {
		return errors.New("empty file")
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}

// The field names of a file and of an entry, from their json tags: made
// when a file is parsed (the built-in table is Go values).
var (
	fileFields  = sync.OnceValue(func() map[string]bool { return jsonFieldNames(reflect.TypeFor[file]()) })
	modelFields = sync.OnceValue(func() map[string]bool { return jsonFieldNames(reflect.TypeFor[Model]()) })
)

func jsonFieldNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names[name] = true
		}
	}
	return names
}

// checkFieldNames rejects keys of the JSON object obj that are not exactly
// one of names; where (" at top level" or "") is added to the message.
// encoding/json matches field names case-insensitively, so this check is
// what rejects "inputPerMtok" for "inputPerMTok".
func checkFieldNames(obj []byte, names map[string]bool, where string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(obj, &fields); err != nil {
		return describeJSONError(nil, err)
	}
	var unknown []string
	for k := range fields {
		if !names[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	quoted := make([]string, len(unknown))
	for i, k := range unknown {
		quoted[i] = strconv.Quote(k)
		for n := range names {
			if strings.EqualFold(n, k) {
				quoted[i] += fmt.Sprintf(" (did you mean %q? names are case-sensitive)", n)
			}
		}
	}
	noun := "field"
	if len(unknown) > 1 {
		noun = "fields"
	}
	return fmt.Errorf("unknown %s %s%s", noun, strings.Join(quoted, ", "), where)
}

func isCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}
