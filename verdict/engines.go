package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/results"
)

// EngineLines are the engine builds a run's preflight asked (the manifest's
// engines), one line each for a report's header: the engine, its version
// when the help said it, the first digits of the help's hash, the host and
// the scenarios it served. Empty for runs written before the preflight.
func EngineLines(builds []results.EngineBuild) []string {
	var out []string
	for _, b := range builds {
		out = append(out, fmt.Sprintf("%s %s on %s (%s)", b.Engine, buildID(b), b.Host, strings.Join(b.Scenarios, ", ")))
	}
	return out
}

// buildID is how a build is told apart: its version and help hash, or
// that its help could not be read.
func buildID(b results.EngineBuild) string {
	if b.HelpHash == "" {
		return "(help not read)"
	}
	id := "help " + results.ShortHash(b.HelpHash)
	if b.Version != "" {
		id = b.Version + ", " + id
	}
	return id
}

// EngineDiff says, per engine and host, where two runs' preflights read
// different helps: the engine build (or its install) changed between them,
// and any difference in the figures may be the engine's. Builds without a
// hash on either side, or absent from one run, say nothing.
func EngineDiff(old, new []results.EngineBuild) []string {
	key := func(b results.EngineBuild) string { return b.Engine + " on " + b.Host }
	hashes := func(bs []results.EngineBuild) map[string][]string {
		m := map[string][]string{}
		for _, b := range bs {
			if b.HelpHash != "" && !slices.Contains(m[key(b)], buildID(b)) {
				m[key(b)] = append(m[key(b)], buildID(b))
			}
		}
		return m
	}
	ho, hn := hashes(old), hashes(new)
	var keys []string
	for k := range hn {
		if _, ok := ho[k]; ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		o, n := ho[k], hn[k]
		slices.Sort(o)
		slices.Sort(n)
		if !slices.Equal(o, n) {
			out = append(out, fmt.Sprintf("%s: OLD %s, NEW %s", k, strings.Join(o, "; "), strings.Join(n, "; ")))
		}
	}
	// Runs on different hosts: compare the builds of each engine whatever
	// the host, so that a build change is not hidden by a host change.
	if len(keys) == 0 {
		byEngine := func(bs []results.EngineBuild) map[string][]string {
			m := map[string][]string{}
			for _, b := range bs {
				if b.HelpHash != "" && !slices.Contains(m[b.Engine], buildID(b)) {
					m[b.Engine] = append(m[b.Engine], buildID(b))
				}
			}
			return m
		}
		eo, en := byEngine(old), byEngine(new)
		for _, e := range slices.Sorted(maps.Keys(en)) {
			o, ok := eo[e]
			if !ok {
				continue
			}
			n := en[e]
			slices.Sort(o)
			slices.Sort(n)
			if !slices.Equal(o, n) {
				out = append(out, fmt.Sprintf("%s: OLD %s, NEW %s", e, strings.Join(o, "; "), strings.Join(n, "; ")))
			}
		}
	}
	return out
}
