package preflight

import "strings"

// closest is the candidate that s most likely meant: the shortest one that
// begins with s (a flag cut short, "--ctx" for "--ctx-size"), else the
// nearest by edit distance if it is near enough (at most half of s's length
// away). A long option ("--x") is compared with long options only. Ties go
// to the first in candidates' order.
func closest(s string, candidates []string) string {
	if strings.HasPrefix(s, "--") {
		var long []string
		for _, c := range candidates {
			if strings.HasPrefix(c, "--") {
				long = append(long, c)
			}
		}
		candidates = long
	}
	prefixed := ""
	for _, c := range candidates {
		if len(c) > len(s) && strings.HasPrefix(c, s) && (prefixed == "" || len(c) < len(prefixed)) {
			prefixed = c
		}
	}
	if prefixed != "" && len(s) > 3 {
		return prefixed
	}
	best, bestD := "", len(s)/2+1
	for _, c := range candidates {
		if d := distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
