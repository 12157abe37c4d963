package agent

import "strconv"

// Count is "1 file", "2 files": n with the noun's singular or plural, for
// the texts users and models read.
func Count(n int, singular, plural string) string {
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + singular
	}
	return strconv.Itoa(n) + " " + plural
}
