package acpv2

import "sync"

// MethodInfo is one method of the v2 schema, as its definitions say
// ("x-method", "x-side").
type MethodInfo struct {
	Name string
	// Side is who serves the method: "agent" (the client calls it),
	// "client" (the agent calls it) or "protocol" (either).
	Side string
	// Params and Result name the definitions of its params and result;
	// a notification has no Result.
	Params, Result string
	// Unstable marks methods only schema.unstable.json has.
	Unstable bool
}

// SchemaMethods returns every method of the v2 schema (stable and
// unstable), by name and side. Proxy methods are left out: an agent is
// not a proxy.
func SchemaMethods() []MethodInfo { return append([]MethodInfo(nil), schemaMethods...) }

// IsUnstable reports whether the definition def is only in the unstable
// schema.
func IsUnstable(def string) bool { return unstableDefs()[def] }

// IsUnstableVariant reports whether tag is a variant of the stable union
// that only the unstable schema has (a session/update "plan_removed", a
// state "unknown").
func IsUnstableVariant(union, tag string) bool { return unstableVariants()[union][tag] }

// The generated tables (types_gen.go) are maps built on first use: a
// start that speaks only v1 never needs them.
var (
	unstableDefs     = sync.OnceValue(newUnstableDefs)
	unstableVariants = sync.OnceValue(newUnstableVariants)
	requiredMembers  = sync.OnceValue(newRequiredMembers)
)
