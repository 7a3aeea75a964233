package measure

// sessionSpans stands a level of multi-turn sessions in for its requests
// when its saturation is judged: one span per session, from its first
// turn's send to its last turn's end. An open loop of sessions sends only
// the first turns on its schedule; each later turn waits for the answer
// before it, so sends of turns keep pace with completions however slow the
// server is, and judged by requests a server that falls ever further behind
// would pass. Sessions arrive on the schedule whatever the server does, so
// a server that cannot keep up completes fewer than arrive. nil when recs
// hold no session.
func sessionSpans(recs []Record) []Record {
	idx := map[string]int{}
	var out []Record
	for _, r := range recs {
		if r.Session == "" {
			continue
		}
		i, ok := idx[r.Session]
		if !ok {
			idx[r.Session] = len(out)
			out = append(out, Record{Level: r.Level, Repeat: r.Repeat, Session: r.Session, SendNs: r.SendNs, EndNs: r.EndNs})
			continue
		}
		s := &out[i]
		s.SendNs, s.EndNs = min(s.SendNs, r.SendNs), max(s.EndNs, r.EndNs)
	}
	return out
}

// firstTurns are the first turns of recs' sessions. Their latencies carry
// the trend of a queue that grows: each waits behind everything in flight
// when its session arrives. A session's whole length does not: a server
// that queues every new turn at the back finishes early and late sessions
// alike near the level's end, so the early ones last longest.
func firstTurns(recs []Record) []Record {
	var out []Record
	for _, r := range recs {
		if r.Session != "" && r.Turn == 1 {
			out = append(out, r)
		}
	}
	return out
}
