// Package engine is what bakeoff knows about each serving engine, one file
// per engine: how to launch it, when it is ready, which log lines mean it
// will never be, what it says about itself, how it reports its speculative
// accept length, how its prefix cache is cleared, which flags make it
// speculative, and which settings make an A/B unfair. The rest of bakeoff
// asks a Profile and never names an engine.
//
// Adding an engine is one file here (a Profile and its register call) and
// its tests; docs/ENGINES.md says how, and where each fact comes from.
package engine

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Engine names, as a scenario's `engine` field writes them.
const (
	SGLang   = "sglang"
	VLLM     = "vllm"
	LlamaCpp = "llamacpp"
	TRTLLM   = "trtllm"
	Generic  = "generic"
)

// Profile is one engine's facts. Fields that are nil or empty mean the engine
// has no such thing (no info call, no cache reset, nothing speculative to see).
type Profile struct {
	// Name is the scenario file's `engine` value.
	Name string
	// Title names the engine for people ("SGLang", "llama.cpp llama-server").
	Title string

	// Launcher is the default command prefix. The word "{python}" stands for
	// the host's python (host.python). Empty: the engine has no default
	// launcher and a scenario must give its own `launch`.
	Launcher []string
	// Fixed returns the flags bakeoff sets after the launcher: the model, the
	// listen address and the port.
	Fixed func(model, host string, port int) []string
	// Help asks the installed engine for the flags it accepts (the
	// preflight, before a campaign's first launch); nil: it cannot be asked.
	Help *HelpCall
	// Reserved maps an arg key bakeoff sets itself (via Fixed) to where the
	// value comes from, so a scenario that sets it too is refused.
	Reserved map[string]string

	// DirArgs are the arg keys whose value is a directory the engine refuses
	// to start without (llama.cpp's slot-save-path: "not a directory"). The
	// launch creates each one first.
	DirArgs []string

	// HealthPath is polled until it answers 200; 503 means loading.
	HealthPath string
	// ReadyLine is a log line the engine writes once it serves; with it seen,
	// any health answer but 503 counts as ready (an old build without the
	// health path answers 404). Empty: only a 200 counts.
	ReadyLine string
	// Fatal are log-line fragments after which the engine never becomes
	// healthy: seeing one ends the wait at once, with the log tail.
	Fatal []string
	// ErrorLines match the lines in which this engine names the cause of a
	// failure; the first of them in the log heads the failure's reason,
	// ahead of a Python traceback's exception and of the error-like lines
	// common to every engine (Failure). Nil: the common rule alone.
	ErrorLines []*regexp.Regexp

	// Info is the call that tells the engine's version (and, for SGLang, its
	// own running accept length), made once after the sweep; nil: none.
	Info *InfoCall
	// Accept reads the level's speculative accept length from the increase
	// of the server's counters between the scrapes before and after it;
	// nil: the engine publishes none there.
	Accept func(s Scrapes) (float64, string)
	// ParseMetrics reads the answer to GET /metrics into one figure per
	// name, for an engine whose answer is not the Prometheus text format
	// (TensorRT-LLM's JSON iteration statistics); nil: Prometheus text.
	ParseMetrics func(body []byte) (map[string]float64, error)
	// ResponseAccept is set for an engine whose responses each carry their
	// own speculative counts (llama.cpp's timings, SGLang's
	// sglext.spec_tokens_details, vLLM's metrics.speculative_decoding),
	// which the records keep (measure.Record's draft counts, verify steps
	// and histogram) and package measure turns into a token-weighted accept
	// length: it names that source for the results. A level's accept length
	// comes from the counts when its responses carried them, else from
	// Accept. Empty: the responses carry none.
	ResponseAccept string
	// AcceptRequest are fields every request's body carries so that the
	// response has its speculative counts (SGLang's
	// return_spec_tokens_details). Every scenario of the engine sends them,
	// speculative or not, so that the requests stay identical. nil: none
	// needed (llama.cpp always sends its timings; vLLM needs a server flag,
	// which its Check asks for).
	AcceptRequest map[string]any
	// Server names the /metrics series the sweep's timeline summarises over
	// each level's steady window; nil: the engine publishes none bakeoff
	// reads (TensorRT-LLM's /metrics is JSON iteration statistics).
	Server *ServerMetrics

	// Reset clears the server's prefix cache and says what it did. An engine
	// without such a call has Reset nil and NoReset saying why.
	Reset   func(ctx context.Context, c *http.Client, base, apiKey string) (string, error)
	NoReset string

	// TokenizeCall is the engine's tokenize endpoint; nil: none, and prompt
	// lengths in tokens are estimated from words.
	TokenizeCall *TokenizeCall
	// TokenPrompts is set when the engine's /v1/completions takes a prompt
	// of token ids ([int…]), so a prompt built as ids is sent as they are.
	TokenPrompts bool

	// Speculative reports whether a scenario's flags switch speculative
	// decoding on.
	Speculative func(a Args) bool
	// Check returns the settings that make an A/B of this engine unfair or
	// that the engine silently overrides.
	Check func(s Setup) []Warning

	// SpecOff is how the engine turns speculative decoding off above a
	// running batch size, for the setting a measured break-even suggests;
	// nil: it has no such setting (docs/ENGINES.md says which do).
	SpecOff *SpecOff
}

// SpecOff is an engine's setting that stops speculating while the server
// runs more than some number of requests.
type SpecOff struct {
	// Key is the setting's name as the engine documents it.
	Key string
	// Min is the smallest value the engine accepts.
	Min int
	// Setting is the flag that sets it to n, as a scenario's args carry it.
	Setting func(n int) string
	// Since names the engine version or change that has it.
	Since string
}

// InfoCall is a GET whose answer is saved with the results.
type InfoCall struct {
	Path string // e.g. /server_info
	// Fallback are older paths of the same call, asked in order when the
	// one before answers 404 (SGLang builds before /server_info have only
	// /get_server_info).
	Fallback []string
	File     string // name under SCENARIO/metrics/
	// Parse reads the engine version and, where the engine keeps one, its
	// own running accept length (docs/ENGINES.md says over what).
	Parse func(body []byte) Info
}

// Paths are the call's paths, newest first: a caller asks the next one only
// when the one before answered 404.
func (c *InfoCall) Paths() []string {
	return append([]string{c.Path}, c.Fallback...)
}

// Ask asks the call's paths with get, newest first, moving to an older one
// only when the server answered 404 there (an older build has the call
// under its older name), and returns the last path asked and what get
// returned for it.
func (c *InfoCall) Ask(get func(path string) (status int, body []byte, err error)) (path string, status int, body []byte, err error) {
	for _, path = range c.Paths() {
		status, body, err = get(path)
		if err != nil || status != http.StatusNotFound {
			break
		}
	}
	return path, status, body, err
}

// Info is what an engine's info call says.
type Info struct {
	Version      string
	AcceptLength *float64
}

// Scrapes are the raw figures around one level: /metrics parsed into one
// value per name (nil when the server has no /metrics) before the level, at
// its middle and after it, and the info call's body after it.
type Scrapes struct {
	Before, Mid, After map[string]float64
	InfoAfter          []byte
}

// Args is a scenario's flags, as the campaign resolved them.
type Args interface {
	// ArgValue returns a flag's value (the last of a repeated flag, "" for
	// a bare one) and whether it is set.
	ArgValue(key string) (string, bool)
}

// Setup is what an engine's checks look at: one scenario in its campaign.
type Setup struct {
	Scenario string
	Args     Args
	// Env returns a variable of the scenario's environment (campaign
	// engine.env merged with the scenario's env).
	Env func(name string) (string, bool)
	// MaxLevel is the sweep's top concurrency; MaxTokens its completion length.
	MaxLevel, MaxTokens int
	// UniquePrompts is the sweep's unique_prompts: no request shares a
	// prefix, so a cache left between levels cannot help.
	UniquePrompts bool
	// Baseline is set for the campaign's baseline scenario, the one every
	// variant is measured against; BaselineArgs are the baseline's flags
	// when this scenario is a variant (nil for the baseline itself).
	Baseline     bool
	BaselineArgs Args
	// ReadFile reads a file a scenario's flag names (an engine's own
	// configuration file), as this machine sees it; nil, or an error, when
	// bakeoff cannot see it, and the checks that need it say nothing.
	ReadFile func(path string) ([]byte, error)
}

// Warning is one finding of a Check: Text, and where to point — the arg
// key or the environment variable that is the cause (both empty: the
// scenario as a whole).
type Warning struct {
	Arg, Env string
	Text     string
	// Refuse is set when the engine refuses to start with the setting:
	// validation fails rather than warns, since the launch could only fail.
	Refuse bool
}

var registry = map[string]*Profile{}

// register adds a profile; each engine's file calls it from init.
func register(p *Profile) {
	if _, dup := registry[p.Name]; dup {
		panic("engine: " + p.Name + " registered twice")
	}
	registry[p.Name] = p
}

// Lookup returns the profile of an engine name, or nil.
func Lookup(name string) *Profile { return registry[name] }

// Names returns the known engine names, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(registry))
}

// NameList is Names for a message: "generic, llamacpp, sglang, trtllm or vllm".
func NameList() string {
	n := Names()
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// Ready reports whether a health answer means the server takes requests:
// 200, or, once the ready line was seen in the log, any answer but 503
// (which every engine here uses for "still loading"). Status 0 is no answer.
func (p *Profile) Ready(status int, readySeen bool) bool {
	if status == http.StatusOK {
		return true
	}
	return readySeen && status != 0 && status != http.StatusServiceUnavailable
}

// FatalLine returns the first of the engine's fatal signatures in line, or "".
func (p *Profile) FatalLine(line string) string {
	for _, sig := range p.Fatal {
		if strings.Contains(line, sig) {
			return sig
		}
	}
	return ""
}

// IsSpeculative reports whether the flags switch speculative decoding on.
func (p *Profile) IsSpeculative(a Args) bool { return p.Speculative != nil && p.Speculative(a) }

// Warnings runs the engine's checks.
func (p *Profile) Warnings(s Setup) []Warning {
	if p.Check == nil {
		return nil
	}
	return p.Check(s)
}

// LaunchArgv is the default command line before the scenario's args:
// launcher (python substituted), then the fixed flags. prefix, when not
// empty, replaces the launcher (engine.command).
func (p *Profile) LaunchArgv(prefix []string, python, model, host string, port int) ([]string, error) {
	if len(p.Launcher) == 0 {
		return nil, fmt.Errorf("engine %s needs a launch command", p.Name)
	}
	argv := slices.Clone(prefix)
	if len(argv) == 0 {
		for _, w := range p.Launcher {
			argv = append(argv, strings.ReplaceAll(w, "{python}", python))
		}
	}
	return append(argv, p.Fixed(model, host, port)...), nil
}

// NoResetError is a cache reset the server refused as unavailable (not
// enabled, or not built in), as opposed to a call that failed.
type NoResetError struct{ Reason string }

func (e *NoResetError) Error() string { return e.Reason }

// pythonFatal are the signatures of any Python server dying at start.
var pythonFatal = []string{
	"Traceback (most recent call last)",
	"CUDA out of memory",
	"Address already in use",
	"unrecognized arguments:",
}
