// Package policy will hold the permission, filesystem and terminal rules
// as pure decision functions with no I/O.
//
// It is empty until the tools issue builds it; the package exists so the
// module layout is the one the design fixes.
package policy
