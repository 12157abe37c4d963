// Package gen generates acp/acpv2's types_gen.go from the SDK 2.4.0 ACP
// v2 schema. It is all tests, so nothing of it is built into a program:
//
//	go test ./acp/acpv2/internal/gen          # fails when types_gen.go is stale
//	go test ./acp/acpv2/internal/gen -update  # rewrites it
package gen
