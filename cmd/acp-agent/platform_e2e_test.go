package main

import (
	"bytes"
	"encoding/json"
	"strings"
)

// platformDoctorText is what doctor adds about this OS.
func platformDoctorText() string {
	var b bytes.Buffer
	platformDoctor(&b)
	return b.String()
}

// jsonText is s escaped for a JSON string (a Windows path's backslashes).
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}
