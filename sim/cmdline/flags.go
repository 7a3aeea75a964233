package cmdline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The sim's command line is SGLang's, as SGLang's argparse parser builds it:
// every action of sglang_args.tsv (generated from SGLang's source by
// scripts/sglang-args.py; sglang_args.go reads it), each with argparse's
// checks, plus the sim's own --sim-… knobs. The flags the sim acts on get a
// setter from modelled.go, keyed by dest; the others are accepted and
// recorded, and --help marks them. This one table parses the command line
// (parse.go) and writes --help (help.go), so that what the help lists is
// what the sim accepts.

// progName is the parser's prog: prepare_server_args builds
// argparse.ArgumentParser(prog="sglang serve"), whichever entry point
// (`sglang serve` or `python -m sglang.launch_server`) started it.
const progName = "sglang serve"

// flagKind says how a flag takes its value, as argparse's nargs and action.
type flagKind int

const (
	kindValue    flagKind = iota // one value: --key value or --key=value
	kindBool                     // nargs 0 (store_true and the deprecated actions): a bare --key
	kindBoolOpt                  // BooleanOptionalAction: --key or --no-key
	kindOptional                 // nargs "?": a value if one follows, else the action's const
	kindList                     // nargs "+": one value or more
	kindListStar                 // nargs "*": any number of values
	kindHelp                     // -h, --help
)

// deprecation is how one of SGLang's deprecated actions
// (python/sglang/srt/arg_groups/argparse_actions.py) reacts when parsed.
type deprecation int

const (
	notDeprecated     deprecation = iota
	deprecatedAlias               // Deprecated{Alias,StoreTrue,StoreConst}Action: works, warns naming replacement
	deprecatedWarn                // DeprecatedAction: does nothing, warns
	deprecatedRefused             // DeprecatedAction with error_message: parser.error(refusal)
)

// flagSpec is one argparse action: its option strings, how it takes its
// value, and what it sets. A nil set accepts and records the flag only.
type flagSpec struct {
	// names are the option strings without their leading dashes, SGLang's
	// own spelling first, then its aliases, in argparse's order. A
	// BooleanOptionalAction's --no-X strings are not here: optionStrings
	// adds them.
	names []string
	short bool // names holds a single-dash option (-h)
	kind  flagKind
	// dest is argparse's dest, the ServerArgs field the value lands in; ""
	// is the first name with '-' read as '_'. A deprecated alias shares the
	// dest of the flag it stands for.
	dest string
	// typ is SGLang's type for the value: int, float, str, or the name of
	// one of its own type functions; "-" for a flag. The sim checks int,
	// float and human_readable_int as SGLang's functions do (values.go).
	typ string
	// metavar is what the help shows for the value; "" is argparse's
	// default: the choices in braces, else the dest in upper case.
	metavar string
	choices []string
	help    string
	// hidden is argparse.SUPPRESS: parsed, but in neither help nor usage.
	hidden bool
	// required is SGLang's: only --model-path, which the sim lets a quick
	// manual run omit (ParseArgs fills in a name).
	required bool
	// sim marks the sim's own knobs, which are not SGLang server args.
	sim bool
	// deprecated says how parsing the flag warns or fails; replacement is
	// the new_flag the warning names, refusal the error a removed flag
	// ends the parse with.
	deprecated  deprecation
	replacement string
	refusal     string
	// set applies one value (each value of a list in turn); the value has
	// passed the type and the choices. nil for the flags the sim does not
	// model: accepted, recorded in Given, no effect.
	set func(c *Config, v string) error
}

// destName is the flag's dest.
func (f *flagSpec) destName() string {
	if f.dest != "" {
		return f.dest
	}
	return strings.ReplaceAll(f.names[0], "-", "_")
}

// optionStrings are the flag's option strings as argparse holds them; a
// BooleanOptionalAction adds --no-X after each --X.
func (f *flagSpec) optionStrings() []string {
	var out []string
	for _, n := range f.names {
		if f.kind == kindHelp && len(n) == 1 {
			out = append(out, "-"+n)
			continue
		}
		out = append(out, "--"+n)
		if f.kind == kindBoolOpt {
			out = append(out, "--no-"+n)
		}
	}
	return out
}

// displayName is how argparse names the action in an error:
// its option strings joined by '/'.
func (f *flagSpec) displayName() string { return strings.Join(f.optionStrings(), "/") }

// modelledSet reports whether the sim acts on the flag.
func (f *flagSpec) modelledSet() bool { return f.set != nil || f.sim || f.kind == kindHelp }

// Setters. An SGLang flag's value has passed its type (values.go) before
// its setter runs; the setters parse it again, and the sim's own stricter
// checks (a positive count, a duration) are worded in argparse's pattern.

func intFlag(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := pyInt(v)
		if err != nil {
			return fmt.Errorf("invalid int value: %s", pyStr(v))
		}
		if dst != nil {
			*dst(c) = n
		}
		return nil
	}
}

// posIntFlag is intFlag for a count that must be at least 1 (a modulus).
func posIntFlag(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := pyInt(v)
		if err != nil || n < 1 {
			return fmt.Errorf("invalid positive int value: %s", pyStr(v))
		}
		*dst(c) = n
		return nil
	}
}

// hrIntFlag sets a count SGLang reads with human_readable_int ("32k").
func hrIntFlag(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := humanReadableInt(v)
		if err != nil {
			return err
		}
		*dst(c) = n
		return nil
	}
}

// posHRIntFlag is hrIntFlag for a count the sim needs at least 1.
func posHRIntFlag(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := humanReadableInt(v)
		if err != nil || n < 1 {
			return fmt.Errorf("invalid positive int value: %s", pyStr(v))
		}
		*dst(c) = n
		return nil
	}
}

func floatFlag(dst func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := pyFloat(v)
		if err != nil {
			return fmt.Errorf("invalid float value: %s", pyStr(v))
		}
		if dst != nil {
			*dst(c) = f
		}
		return nil
	}
}

// nonNegFloatFlag is floatFlag for a σ: negative values are refused.
func nonNegFloatFlag(dst func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("invalid non-negative float value: '%s'", v)
		}
		*dst(c) = f
		return nil
	}
}

// secondsValue reads a count of seconds as argparse's int or float type
// reads it (kind names the type in the error) and returns it as a duration.
func secondsValue(v, kind string) (time.Duration, error) {
	var f float64
	var err error
	if kind == "int" {
		var n int
		n, err = pyInt(v)
		f = float64(n)
	} else {
		f, err = pyFloat(v)
	}
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid %s value: %s", kind, pyStr(v))
	}
	return time.Duration(f * float64(time.Second)), nil
}

func strFlag(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

// boolFlag sets a flag: v is "true", or "false" for a BooleanOptionalAction's --no-X.
func boolFlag(dst func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v != "false"; return nil }
}

func durFlag(dst func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("invalid duration value: '%s'", v)
		}
		*dst(c) = d
		return nil
	}
}

// specAlgorithms are the speculative algorithms SGLang builds in
// (python/sglang/srt/arg_groups/fields/spec.py). SGLang's argparse takes any
// name (others may be registered at run time) and refuses an unknown one
// when the server starts; the sim does the same (checkConfig).
var specAlgorithms = []string{"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO"}

// simFlags are the sim's own knobs (docs/SIM.md). Their help says "sim:" so
// that a reader of --help tells them from SGLang's.
var simFlags = []flagSpec{
	{names: []string{"sim-speed"}, metavar: "X", help: "sim: run simulated time X times faster (default 1)", set: func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return fmt.Errorf("invalid positive float value: '%s'", v)
		}
		c.Sim.Speed = f
		return nil
	}},
	{names: []string{"sim-load-time"}, metavar: "D", help: "sim: simulated load time (default 20s; wall time D/X)",
		set: durFlag(func(c *Config) *time.Duration { return &c.Sim.LoadTime })},
	{names: []string{"sim-seed"}, metavar: "N", help: "sim: seed of the noise and accept lengths (default: fresh), mixed with $BAKEOFF_LAUNCH and $BAKEOFF_ROUND if set",
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("invalid int value: '%s'", v)
			}
			c.Sim.Seed, c.Sim.SeedSet = n, true
			return nil
		}},
	{names: []string{"sim-slowdown"}, metavar: "F", help: "sim: multiply every step time by F (default 1)",
		set: floatFlag(func(c *Config) *float64 { return &c.Sim.Slowdown })},
	{names: []string{"sim-noise"}, metavar: "F", help: "sim: relative noise sigma of each step (default 0.02)",
		set: floatFlag(func(c *Config) *float64 { return &c.Sim.Noise })},
	{names: []string{"sim-draft-accept"}, metavar: "P", help: "sim: probability that the drafter's top-1 guess for a draft position is accepted (default 0.56); a wider tree accepts more",
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 || f > 1 {
				return fmt.Errorf("invalid probability value: '%s'", v)
			}
			c.Sim.DraftAccept = f
			return nil
		}},
	{names: []string{"sim-launch-sigma"}, metavar: "F", help: "sim: sigma of the log of a step-time factor drawn once per launch from the seed (default 0)",
		set: nonNegFloatFlag(func(c *Config) *float64 { return &c.Sim.LaunchSigma })},
	{names: []string{"sim-drift"}, metavar: "F", help: "sim: sigma of a slow drift in the log of step time, an Ornstein-Uhlenbeck process (default 0)",
		set: nonNegFloatFlag(func(c *Config) *float64 { return &c.Sim.Drift })},
	{names: []string{"sim-drift-tau"}, metavar: "D", help: "sim: the drift's correlation time, simulated (default 1m)", set: func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("invalid positive duration value: '%s'", v)
		}
		c.Sim.DriftTau = d
		return nil
	}},
	{names: []string{"sim-drift-scope"}, choices: []string{"launch", "host"},
		help: "sim: whose drift it is: each launch's own (default) or the host's, shared by every server on the same --sim-state",
		set:  func(c *Config, v string) error { c.Sim.HostDrift = v == "host"; return nil }},
	{names: []string{"sim-prefix-cache"}, kind: kindBool, help: "sim: model SGLang's radix cache (off by default)",
		set: boolFlag(func(c *Config) *bool { return &c.Sim.PrefixCache })},
	{names: []string{"sim-gpus"}, metavar: "N", help: "sim: GPUs this server may use (default: the tp size over --nnodes)",
		set: intFlag(func(c *Config) *int { return &c.Sim.GPUs })},
	{names: []string{"sim-state"}, metavar: "DIR", help: "sim: the memory registry the fake nvidia-smi reads (default $BAKEOFF_SIM_STATE or $TMPDIR/bakeoff-sim-state-UID)",
		set: strFlag(func(c *Config) *string { return &c.Sim.StateDir })},
	{names: []string{"sim-fault"}, metavar: "NAME[=ARG]", help: "sim: die-during-load, hang-during-load, crash-on-first-request, crash-after=N, ignore-sigterm=D, hold-memory=D, orphan-children, wrong-output, close-after-stream, idle-close=D (repeatable; durations are wall time)",
		set: func(c *Config, v string) error { return c.Sim.Faults.Add(v) }},
	// How the server process tells a scheduler child who it is: not for users.
	{names: []string{"sim-child-rank"}, hidden: true, set: intFlag(func(c *Config) *int { return &c.Sim.ChildRank })},
	{names: []string{"sim-parent-pid"}, hidden: true, set: intFlag(func(c *Config) *int { return &c.Sim.ParentPID })},
	{names: []string{"sim-parent-start"}, hidden: true, set: func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid int value: '%s'", v)
		}
		c.Sim.ParentStart = n
		return nil
	}},
}

// flagTable is every action in the parser's order: SGLang's (help first,
// as argparse adds it), then the sim's knobs. Built on first use, not at
// init: every bakeoff process links this package (the sweep, the CLI, the
// fake nvidia-smi), and only the sim reads the table.
var flagTable = sync.OnceValue(func() []*flagSpec {
	sg, err := parseSGLangArgs(sglangArgsTSV)
	if err != nil {
		panic("sim: " + err.Error())
	}
	var out []*flagSpec
	for i := range sg {
		f := &sg[i]
		if m, ok := modelled[f.destName()]; ok {
			f.set = m.set
		}
		out = append(out, f)
	}
	for i := range simFlags {
		simFlags[i].sim = true
		out = append(out, &simFlags[i])
	}
	return out
})

// optionIndex maps every option string ("--tp-size", "-h") to its action.
var optionIndex = sync.OnceValue(func() map[string]*flagSpec {
	m := map[string]*flagSpec{}
	for _, f := range flagTable() {
		for _, o := range f.optionStrings() {
			if _, dup := m[o]; dup {
				panic("sim: option " + o + " registered twice")
			}
			m[o] = f
		}
	}
	return m
})
