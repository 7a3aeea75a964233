package measure

// SteadyITL are the inter-token gaps, in seconds, of one level repeat's
// successful requests that lived inside its steady state: sent after the
// window opened and finished by its end (or every request, when the repeat
// has no steady state). A ramp-up's requests start into a batch still
// filling, and a ramp-down's finish in one that empties, so their gaps are
// shorter than those the level's load makes; the throughput leaves them out
// for the same reason. Records without gaps (written before they were
// kept) add none.
func SteadyITL(level Level, recs []Record) []float64 {
	w, steady := throughputWindow(level, recs)
	var out []float64
	for _, r := range recs {
		if r.OK() && len(r.ITL) > 0 && (!steady || InSteadyState(r, w)) {
			out = append(out, r.ITL.Seconds()...)
		}
	}
	return out
}

// InSteadyState reports whether r lived inside the steady-state window w:
// sent after it opened, finished by its end.
func InSteadyState(r Record, w Window) bool {
	return r.SendNs > w.Start && r.EndNs <= w.End
}
