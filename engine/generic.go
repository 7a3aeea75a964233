package engine

// generic is any OpenAI-compatible server bakeoff has no profile for: the
// scenario gives its whole launch command, readiness is a 200 from
// engine.health_path, and the accept length is read from whichever known
// engine's figures the server happens to publish: counts in each response
// (llama.cpp's timings, SGLang's sglext, vLLM's metrics), else the increase
// of its counters.
var generic = &Profile{
	Name:       Generic,
	Title:      "an OpenAI-compatible server",
	HealthPath: "/health",
	Fatal:      pythonFatal,
	Accept:     anyAccept,
	Server:     genericServer,
	// A server whose responses carry their own counts is measured by
	// them. No request field is sent: a server of unknown engine might
	// refuse one it does not know.
	ResponseAccept: SourceAnyResponse,
	NoReset:        "engine generic has no known reset (set prefix_cache: none if the server keeps no prefix cache, or give its reset call: docs/CONFIG.md)",
}

func init() { register(generic) }

// anyAccept tries every engine's counter reader.
func anyAccept(s Scrapes) (float64, string) {
	for _, read := range []func(Scrapes) (float64, string){vllmAccept, sglangAccept, llamacppAccept} {
		if v, src := read(s); src != "" {
			return v, src
		}
	}
	return 0, ""
}
