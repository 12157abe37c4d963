// Package jsonvalidate compiles JSON Schemas (tool parameters from MCP
// servers and built-in tools, structured-output schemas) and validates
// JSON values against them, naming every problem with the JSON Pointer of
// the value that broke it.
//
// Validation itself is github.com/google/jsonschema-go's (the binary
// links it anyway, through the MCP SDK); this package adds what an agent
// needs around it for untrusted schemas:
//
//   - drafts: draft-07 and 2020-12 as the library has them, draft-04 and
//     draft-06 read as draft-07 (draft-04's boolean exclusiveMinimum and
//     exclusiveMaximum rewritten), 2019-09 read as 2020-12 (a tuple
//     "items" becomes "prefixItems"); no "$schema" means 2020-12; any
//     other "$schema" does not compile;
//   - checks the library leaves to a meta-schema: unknown type names,
//     negative counts, a non-positive multipleOf, a tuple "items" in a
//     2020-12 schema;
//   - no reference is ever loaded: a "$ref" that does not point into the
//     schema itself does not compile (nothing is fetched or read);
//   - a schema whose references loop without consuming the value
//     ({"$ref":"#"}), or expand to too many subschemas for one value, does
//     not compile: validating it would never end;
//   - a value whose check would apply more than 2^20 subschemas (a schema
//     that applies itself twice to each member, on a deep value: 2^depth)
//     is refused before the library sees it, from a count that takes one
//     pass per part of the value and subschema;
//   - multipleOf divides the decimals as written (0.07 is a multiple of
//     0.01), where the library divides floats; under not, if, anyOf,
//     oneOf and contains the library's division stays;
//   - every problem, not only the first: when the library rejects a
//     value, a walk of the schema collects each failing value's location
//     and reason, sorted by location;
//   - "format" is asserted for the common formats (date-time, date, time,
//     email, hostname, ipv4, ipv6, uri, uuid, regex), as the validator
//     this package replaced did.
//
// A compiled *Schema is immutable and safe for concurrent use.
package jsonvalidate
