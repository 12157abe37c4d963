package sessionid

import "testing"

func TestNameClash(t *testing.T) {
	for id, clash := range map[string]bool{
		"0b3e8f2a-6c1d-4e5f-9a7b-1c2d3e4f5a6b": false,
		"sess_1.v2":                            false,
		"console":                              false,
		"com":                                  false,
		"com10":                                false,
		"a.json":                               false,
		"0b3e8f2a-6c1d-4e5f-9a7b-1c2d3e4f5a6b.jsonl": true,
		"x.JSONL":              true,
		"x.lock":               true,
		"x.jsonl.tmp123":       true,
		"x.jsonl.jsonl.broken": true,
		"x.":                   true,
		"con":                  true,
		"NUL":                  true,
		"aux.jsonl":            true,
		"nul.txt":              true,
		"com1":                 true,
		"LPT9.x":               true,
		"prn":                  true,
	} {
		if got := NameClash(id) != ""; got != clash {
			t.Errorf("NameClash(%q) = %q, want a clash: %v", id, NameClash(id), clash)
		}
	}
}
