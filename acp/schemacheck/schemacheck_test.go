package schemacheck

import (
	"strings"
	"sync"
	"testing"
)

func TestSchemaCheckValidates(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	ok := []byte(`{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}`)
	if err := c.Validate("PromptRequest", ok); err != nil {
		t.Fatalf("valid PromptRequest rejected: %v", err)
	}
	bad := []byte(`{"sessionId":"s1"}`)
	if err := c.Validate("PromptRequest", bad); err == nil {
		t.Fatal("PromptRequest without prompt accepted")
	}
	// protocolVersion must be an integer; json.Number keeps 1 an integer.
	if err := c.Validate("InitializeRequest", []byte(`{"protocolVersion":1}`)); err != nil {
		t.Fatalf("InitializeRequest rejected: %v", err)
	}
	if err := c.Validate("InitializeRequest", []byte(`{"protocolVersion":"1.0.0"}`)); err == nil {
		t.Fatal("string protocolVersion accepted")
	}
}

func TestSchemaCheckSchemas(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	fork := []byte(`{"sessionId":"s1","cwd":"/tmp"}`)
	if err := c.ValidateUnstable("ForkSessionRequest", fork); err != nil {
		t.Fatalf("unstable ForkSessionRequest: %v", err)
	}
	if err := c.Validate("ForkSessionRequest", fork); err == nil || !strings.Contains(err.Error(), "no $defs/ForkSessionRequest") {
		t.Fatalf("stable schema has no ForkSessionRequest, got %v", err)
	}
	notice := []byte(`{"sessionId":"s1","update":{"sessionUpdate":"notice","severity":"info","title":"t"}}`)
	if err := c.ValidateSDK("SessionNotification", notice); err != nil {
		t.Fatalf("SDK notice: %v", err)
	}
	if err := c.Validate("SessionNotification", notice); err == nil {
		t.Fatal("stable schema accepted a notice update")
	}
	if !c.HasDef("sdk", "Notice") || c.HasDef("stable", "Notice") {
		t.Fatal("HasDef")
	}
}

func TestSchemaCheckConcurrent(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Validate("CancelNotification", []byte(`{"sessionId":"s"}`)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
