package results

// Replicate is the replicate of results round k (1-based): k itself unless
// the rounds were split over a fleet (Manifest.Replicates).
func (m Manifest) Replicate(k int) int {
	if k >= 1 && k <= len(m.Replicates) {
		return m.Replicates[k-1]
	}
	return k
}

// Split reports whether the run's rounds were split into parts.
func (m Manifest) Split() bool { return len(m.Replicates) > 0 }
