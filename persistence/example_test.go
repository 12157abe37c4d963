package persistence_test

import (
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/acp-agent/acp-agent/persistence"
)

// A session is created, a record is made durable, and the session is
// reopened. In the agent the directory is persistence.DefaultDir(os.Getenv).
func Example() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := persistence.OpenStore(dir)
	if err != nil {
		log.Fatal(err)
	}
	// At exit, once its files are closed: the next start need not list
	// the directory (Store.RemoveStaleAtStart).
	defer store.Close()

	f, err := store.Create(persistence.Header{ID: "s1", CWD: "/project"})
	if err != nil {
		log.Fatal(err)
	}
	// Durable once AppendSync returns: only then answer the client.
	if err := f.AppendSync(json.RawMessage(`{"type":"message","role":"user","text":"hi"}`)); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	f, loaded, err := store.Open("s1")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println(loaded.Header.CWD, len(loaded.Records), string(loaded.Records[0]))
	// Output: /project 1 {"type":"message","role":"user","text":"hi"}
}
