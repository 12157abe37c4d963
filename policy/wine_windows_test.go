package policy

// The Wine test build's adaptations (internal/winetest): the policy tests
// that make directories need its delete.
import _ "github.com/acp-agent/acp-agent/internal/winetest"
