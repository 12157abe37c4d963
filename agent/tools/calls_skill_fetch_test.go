package tools_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

var skills = map[string]string{
	".agents/skills/pdf/SKILL.md":     "---\nname: pdf\ndescription: Work with PDF files\n---\nUse pdftotext; see reference.md.",
	".agents/skills/pdf/reference.md": "PDF-REFERENCE",
	"secret.txt":                      "not a skill's",
}

func TestSkill(t *testing.T) {
	runChecks(t, "skill", skills, []check{
		{name: "the instructions, and the folder's files", args: `{"name":"pdf"}`, title: "Use the skill `pdf`",
			has: []string{"# Skill pdf\n\nUse pdftotext; see reference.md.", "Files in the skill's folder (read one with this tool's file argument): reference.md"}},
		{name: "a file of the folder", args: `{"name":"pdf","file":"reference.md"}`, title: "Use the skill `pdf` (`reference.md`)", has: []string{"PDF-REFERENCE"}},
		{name: "an unknown skill", args: `{"name":"docx"}`, err: true, has: []string{`there is no skill "docx"`}},
		{name: "a file outside the folder", args: `{"name":"pdf","file":"../../../secret.txt"}`, err: true},
		{name: "a missing file", args: `{"name":"pdf","file":"nope.md"}`, err: true, has: []string{"reading nope.md of the skill pdf"}},
		{name: "no name", args: `{"name":""}`, err: true, has: []string{refused, "/name"}},
	})
}

func TestWebFetch(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<html><body><h1>Client</h1><p>A <b>client</b> sends requests.</p></body></html>")
		case "/data":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok":true}`)
		case "/logo":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	runChecks(t, "web_fetch", nil, []check{
		{name: "HTML becomes Markdown", args: `{"url":"` + site.URL + `/page"}`, title: "Fetch `" + site.URL + "/page`",
			has: []string{site.URL + "/page (HTTP 200)\n\n# Client\n\nA **client** sends requests."}},
		{name: "text as it is", args: `{"url":"` + site.URL + `/data"}`, has: []string{`{"ok":true}`}},
		{name: "an HTTP error is an error result", args: `{"url":"` + site.URL + `/missing"}`, err: true, has: []string{"(HTTP 404)"}},
		{name: "not text", args: `{"url":"` + site.URL + `/logo"}`, err: true, has: []string{"is image/png, not text"}},
		{name: "not http", args: `{"url":"file:///etc/passwd"}`, err: true, has: []string{`only http and https URLs can be fetched, not "file"`}},
		{name: "credentials", args: `{"url":"http://user:pw@` + site.Listener.Addr().String() + `/page"}`, err: true, has: []string{"the URL carries credentials"}},
		{name: "a metadata address is never dialled", args: `{"url":"http://169.254.169.254/latest/meta-data"}`, err: true, has: []string{"169.254.169.254"}},
		{name: "no URL", args: `{"url":""}`, err: true, has: []string{refused, "/url"}},
	})
}
