// Package runtime will hold the local filesystem and terminal runtimes that
// tools use when the editor does not offer fs/* and terminal/*: a
// filesystem confined with os.Root to the session's roots, and processes
// run in their own process group with bounded output.
//
// It is empty until the tools issue builds it; the package exists so the
// module layout is the one the design fixes.
package runtime
