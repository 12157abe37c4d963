package main

import (
	"encoding/json"
	"strings"
)

// jsonText is s escaped for a JSON string (a Windows path's backslashes).
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}
