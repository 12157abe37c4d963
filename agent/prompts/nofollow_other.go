//go:build !unix

package prompts

const nofollow = 0
