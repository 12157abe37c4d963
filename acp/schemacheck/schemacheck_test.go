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

// The extension updates are valid only against acp-agent's own schema: the
// official one rejects them, which is why they are opt-in.
func TestSchemaCheckExtensionUpdates(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		json string
		ok   bool
	}{
		{"queued", `{"sessionId":"s","update":{"sessionUpdate":"execution_state_update","executionState":{"state":"queued"}}}`, true},
		{"retrying with attempt", `{"sessionId":"s","update":{"sessionUpdate":"execution_state_update","executionState":{"state":"retrying","attempt":1,"message":"x"}}}`, true},
		{"retry", `{"sessionId":"s","update":{"sessionUpdate":"retry_update","retry":{"attempt":1,"maxAttempts":3,"reason":"429"}}}`, true},
		{"unknown state", `{"sessionId":"s","update":{"sessionUpdate":"execution_state_update","executionState":{"state":"paused"}}}`, false},
		{"null message", `{"sessionId":"s","update":{"sessionUpdate":"execution_state_update","executionState":{"state":"failed","message":null}}}`, false},
		{"retry without maxAttempts", `{"sessionId":"s","update":{"sessionUpdate":"retry_update","retry":{"attempt":1}}}`, false},
		{"retry attempt zero", `{"sessionId":"s","update":{"sessionUpdate":"retry_update","retry":{"attempt":0,"maxAttempts":1}}}`, false},
		{"standard update", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.ValidateExtension("SessionNotification", []byte(tc.json))
			if (err == nil) != tc.ok {
				t.Fatalf("ValidateExtension ok=%v, err=%v", tc.ok, err)
			}
			if tc.ok && c.Validate("SessionNotification", []byte(tc.json)) == nil {
				t.Fatal("the official schema accepted an extension update")
			}
		})
	}
	if !c.HasDef("extension", "RetryUpdate") {
		t.Fatal("HasDef(extension, RetryUpdate)")
	}
}

// TestV2StrictSchemasWantCustomValuesMarked: the v2 schemas take values
// they do not list (for newer versions and custom use); the strict copies
// take only custom ones, which start with "_".
func TestV2StrictSchemasWantCustomValuesMarked(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	update := func(u string) []byte { return []byte(`{"sessionId":"s1","update":` + u + `}`) }
	for _, tc := range []struct {
		name, update string
		lax, strict  bool
	}{
		{"known kind", `{"sessionUpdate":"tool_call_update","toolCallId":"t","kind":"read"}`, true, true},
		{"unmarked kind", `{"sessionUpdate":"tool_call_update","toolCallId":"t","kind":"compile"}`, true, false},
		{"custom kind", `{"sessionUpdate":"tool_call_update","toolCallId":"t","kind":"_compile"}`, true, true},
		{"unmarked update", `{"sessionUpdate":"retry_update","attempt":1}`, true, false},
		{"custom update", `{"sessionUpdate":"_acp-agent/retry","attempt":1}`, true, true},
		{"unmarked stop reason", `{"sessionUpdate":"state_update","state":"idle","stopReason":"timeout"}`, true, false},
		{"custom stop reason", `{"sessionUpdate":"state_update","state":"idle","stopReason":"_timeout"}`, true, true},
		{"unmarked state", `{"sessionUpdate":"state_update","state":"paused"}`, true, false},
		{"v1 update", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}`, false, false},
	} {
		if err := c.ValidateV2("UpdateSessionNotification", update(tc.update)); (err == nil) != tc.lax {
			t.Errorf("%s: lax schema: %v", tc.name, err)
		}
		if err := c.ValidateV2Strict("UpdateSessionNotification", update(tc.update)); (err == nil) != tc.strict {
			t.Errorf("%s: strict schema: %v", tc.name, err)
		}
		if err := c.ValidateV2UnstableStrict("UpdateSessionNotification", update(tc.update)); (err == nil) != tc.strict {
			t.Errorf("%s: strict unstable schema: %v", tc.name, err)
		}
	}
	removed := update(`{"sessionUpdate":"plan_removed","planId":"p"}`)
	if c.ValidateV2UnstableStrict("UpdateSessionNotification", removed) != nil || c.ValidateV2Strict("UpdateSessionNotification", removed) == nil {
		t.Error("plan_removed is an unstable update: valid in the unstable schema only (strictly)")
	}
}
