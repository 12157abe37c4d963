package tools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/agent.md shows every built-in tool's description as the model
// gets it: a description changed in the code without the document (or
// the other way round) fails here.
func TestDocsShowEveryToolDescription(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "agent.md"))
	require.NoError(t, err)
	w := workspaceWithASkill(t)
	for _, tool := range w.Tools() {
		assert.True(t, strings.Contains(string(doc), "### "+tool.Name+"\n\n```text\n"+tool.Description+"\n```"),
			"docs/agent.md does not show %s's description as the code has it", tool.Name)
	}
}
