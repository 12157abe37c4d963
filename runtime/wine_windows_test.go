package runtime

// The Wine test build's adaptations (internal/winetest).
import _ "github.com/acp-agent/acp-agent/internal/winetest"
