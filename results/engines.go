package results

import "strings"

// EngineBuild is what the preflight learned of one engine build on one host
// before the campaign's first launch: the help command it ran, a hash of
// the help it printed and the version the help states. Two runs whose
// builds differ in hash ran different engine builds or installs, whatever
// their version says (docs/RESULTS.md).
type EngineBuild struct {
	Host    string `json:"host"`
	Engine  string `json:"engine"` // the scenarios' engine name (sglang, vllm, …)
	Command string `json:"command"`
	// HelpHash is "sha256:…" of the help text; empty when the help could
	// not be read (Note says why).
	HelpHash string `json:"help_hash,omitempty"`
	// Version is what the help says of the engine's version; empty when it
	// says nothing (the version the engine reports once running is in each
	// launch's info file).
	Version string `json:"version,omitempty"`
	// Scenarios are the scenarios this build serves, in campaign order.
	Scenarios []string `json:"scenarios"`
	// Note says why the flags were not checked, when they were not.
	Note string `json:"note,omitempty"`
}

// ShortHash is a help hash as people compare it: its first 12 hex digits,
// without the "sha256:".
func ShortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}
