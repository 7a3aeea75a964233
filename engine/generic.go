package engine

// generic is any OpenAI-compatible server bakeoff has no profile for: the
// scenario gives its whole launch command, readiness is a 200 from
// engine.health_path, and the accept length is read from whichever known
// engine's figures the server happens to publish: its metrics, or draft
// counts in each response as llama.cpp's.
var generic = &Profile{
	Name:       Generic,
	Title:      "an OpenAI-compatible server",
	HealthPath: "/health",
	Fatal:      pythonFatal,
	Accept:     anyAccept,
	// A server whose responses carry draft counts (llama.cpp's timings)
	// is measured by them.
	ResponseAccept: SourceLlamaCppTimings,
	NoReset:        "engine generic has no known reset (name the server's engine, or use unique prompts)",
}

func init() { register(generic) }

// anyAccept tries every engine's metric reader, vLLM's counters first (a
// delta over the level beats a gauge).
func anyAccept(s Scrapes) (float64, string) {
	for _, read := range []func(Scrapes) (float64, string){vllmAccept, sglangAccept} {
		if v, src := read(s); src != "" {
			return v, src
		}
	}
	return 0, ""
}
