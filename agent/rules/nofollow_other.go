//go:build !unix

package rules

const nofollow = 0
