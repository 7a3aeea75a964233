package cmdline

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/sim/gpu"
)

// ArgError is a command-line error worded as SGLang's argparse words it, so
// that a typo in a scenario fails the same way against the sim and the real
// server. Error returns the stderr argparse writes before exiting with
// status 2: the usage, then "sglang serve: error: …".
type ArgError struct{ Msg string }

func (e *ArgError) Error() string {
	return strings.TrimSuffix(Usage(terminalWidth), "\n") + "\n" + progName + ": error: " + e.Msg
}

// ErrHelp is returned when the command line asks for -h/--help: argparse
// prints the help (Help) and exits 0 there.
var ErrHelp = errors.New("help requested")

// ParseArgs parses a `bakeoff sim` command line (SGLang flags and --sim-…
// knobs) as SGLang's argparse parser does, then resolves the server args as
// SGLang does at startup (resolve.go), with getenv for the environment
// (SGLANG_ENABLE_SPEC_V2, BAKEOFF_SIM_COMPUTE_CAP, BAKEOFF_SIM_STATE,
// TMPDIR, the launch names). Flag errors are *ArgError; -h is ErrHelp.
func ParseArgs(args []string, getenv func(string) string) (*Config, error) {
	c := &Config{
		Host:               DefaultHost,
		Port:               DefaultPort,
		TP:                 DefaultTP,
		SpecSteps:          DefaultSpecSteps,
		SpecTopK:           DefaultSpecTopK,
		CudaGraphMaxBS:     DefaultCudaGraphMaxBS,
		MemFractionStatic:  DefaultMemFractionStatic,
		ContextLength:      DefaultContextLength,
		ChunkedPrefillSize: DefaultChunkedPrefillSize,
		StreamInterval:     1,
		LogLevel:           "info",
		Given:              map[string]string{},
		Deploy:             defaultDeployment(),
		Sim: SimOptions{
			Speed:     DefaultSpeed,
			LoadTime:  DefaultLoadTime,
			Slowdown:  DefaultSlowdown,
			Noise:     DefaultNoise,
			ChildRank: -1,
		},
	}
	var extras []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			// Everything after "--" is positional, and there are none.
			extras = append(extras, args[i:]...)
			break
		}
		if !looksLikeOption(a) {
			// No positionals in SGLang's parser: argparse leaves it over.
			extras = append(extras, a)
			continue
		}
		spec, option, val, hasVal, err := matchOption(a)
		if err != nil {
			return nil, err
		}
		if spec == nil {
			extras = append(extras, a)
			continue
		}
		vals, next, err := takeValues(spec, args, i, val, hasVal)
		if err != nil {
			return nil, err
		}
		i = next
		if spec.kind == kindHelp {
			return nil, ErrHelp
		}
		for _, v := range vals {
			if err := applyValue(c, spec, v); err != nil {
				return nil, err
			}
		}
		if (spec.kind == kindBool || spec.kind == kindBoolOpt) && spec.set != nil {
			// A flag takes no value: its setter hears which way it was set.
			if err := spec.set(c, strconv.FormatBool(!strings.HasPrefix(option, "--no-"))); err != nil {
				return nil, &ArgError{fmt.Sprintf("argument %s: %v", spec.displayName(), err)}
			}
		}
		switch spec.deprecated {
		case deprecatedRefused:
			// DeprecatedAction with an error_message calls parser.error.
			return nil, &ArgError{spec.refusal}
		case deprecatedAlias, deprecatedWarn:
			// argparse_actions.py's print_deprecated_warning: bold yellow,
			// before logging is configured, so the bare message on stderr.
			c.ParseWarnings = append(c.ParseWarnings, "\x1b[1;33m"+deprecationWarning(spec, option)+"\x1b[0m")
		}
		if !spec.sim {
			given := strings.Join(vals, " ")
			switch {
			case spec.kind == kindBool:
				given = "true"
			case spec.kind == kindBoolOpt:
				given = strconv.FormatBool(!strings.HasPrefix(option, "--no-"))
			}
			c.Given[spec.destName()] = given
		}
	}
	if len(extras) > 0 {
		return nil, &ArgError{"unrecognized arguments: " + strings.Join(extras, " ")}
	}
	if c.ModelPath == "" {
		// SGLang requires --model-path; the sim lets quick manual runs omit it.
		c.ModelPath = "bakeoff-sim/model"
	}
	if c.TP < 1 {
		return nil, &ArgError{fmt.Sprintf("argument --tp-size/--tensor-parallel-size: invalid value: %d", c.TP)}
	}
	if err := checkDeployment(c); err != nil {
		return nil, err
	}
	if c.Sim.GPUs == 0 {
		c.Sim.GPUs = c.NodeTP()
	}
	if v, ok := gpu.VisibleDevices(getenv(gpu.CUDAVisibleDevicesEnv), gpu.HostGPUs(getenv)); ok {
		// The process sees only these: more ranks than they are fail to
		// set their device (load.go), as under SGLang.
		c.Sim.Visible, c.Sim.GPUs = v, min(c.Sim.GPUs, len(v))
	}
	if c.Sim.SeedSet {
		c.Sim.Seed, c.Sim.SeedMix = mixLaunch(c.Sim.Seed, getenv)
	}
	if v := getenv(SimRunFactorEnv); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0) {
			return nil, fmt.Errorf("%s=%q: want a factor above 0 (1.03 is every step 3%% slower)", SimRunFactorEnv, v)
		}
		c.Sim.Slowdown *= f
	}
	if c.Sim.StateDir == "" {
		c.Sim.StateDir = gpu.DefaultStateDir(getenv)
	}
	cc, err := gpu.ComputeCap(getenv)
	if err != nil {
		return nil, err
	}
	c.Sim.ComputeCap = cc
	resolve(c, getenv)
	return c, nil
}

// takeValues consumes the values of the option at args[i] as argparse's
// consume_optional does for the action's nargs: an explicit "=value" is the
// one value; otherwise the following strings that do not look like options.
// It returns the values and the index of the last string consumed.
func takeValues(spec *flagSpec, args []string, i int, val string, hasVal bool) ([]string, int, error) {
	following := func() []string {
		var out []string
		for j := i + 1; j < len(args) && !looksLikeOption(args[j]) && args[j] != "--"; j++ {
			out = append(out, args[j])
		}
		return out
	}
	switch spec.kind {
	case kindHelp, kindBool, kindBoolOpt:
		if hasVal {
			return nil, i, &ArgError{fmt.Sprintf("argument %s: ignored explicit argument %s", spec.displayName(), pyStr(val))}
		}
		return nil, i, nil
	case kindValue:
		if hasVal {
			return []string{val}, i, nil
		}
		if f := following(); len(f) > 0 {
			return f[:1], i + 1, nil
		}
		return nil, i, &ArgError{fmt.Sprintf("argument %s: expected one argument", spec.displayName())}
	case kindOptional:
		// Without a value the action stores its const.
		if hasVal {
			return []string{val}, i, nil
		}
		if f := following(); len(f) > 0 {
			return f[:1], i + 1, nil
		}
		return nil, i, nil
	case kindList, kindListStar:
		if hasVal {
			return []string{val}, i, nil
		}
		f := following()
		if len(f) == 0 && spec.kind == kindList {
			return nil, i, &ArgError{fmt.Sprintf("argument %s: expected at least one argument", spec.displayName())}
		}
		return f, i + len(f), nil
	}
	return nil, i, fmt.Errorf("flag %s: unknown kind %d", spec.displayName(), spec.kind)
}

// deprecationWarning is the warning SGLang's deprecated actions print for
// option (argparse_actions.py).
func deprecationWarning(spec *flagSpec, option string) string {
	if spec.deprecated == deprecatedWarn {
		return fmt.Sprintf("The command line argument '%s' is deprecated and will be removed in future versions.", option)
	}
	msg := fmt.Sprintf("'%s' is deprecated and will be removed in a future release.", option)
	if spec.replacement != "" {
		msg += fmt.Sprintf(" Use '%s' instead.", spec.replacement)
	}
	return msg
}

// applyValue converts one value to the action's type, checks it against
// the choices (argparse converts first, then compares), and sets it,
// wording a failure as argparse's ArgumentError does.
func applyValue(c *Config, spec *flagSpec, v string) error {
	conv := any(v)
	if !spec.sim {
		var err error
		if conv, err = convertValue(spec.typ, v); err != nil {
			return &ArgError{fmt.Sprintf("argument %s: %v", spec.displayName(), err)}
		}
	}
	if err := checkChoice(spec, conv); err != nil {
		return err
	}
	if spec.set == nil {
		return nil
	}
	if err := spec.set(c, v); err != nil {
		return &ArgError{fmt.Sprintf("argument %s: %v", spec.displayName(), err)}
	}
	return nil
}

// checkChoice is argparse's _check_value: the converted value must be one
// of the choices, compared as the type converts them (an int flag's "02"
// is the choice 2).
func checkChoice(spec *flagSpec, v any) error {
	if len(spec.choices) == 0 {
		return nil
	}
	quoted := make([]string, len(spec.choices))
	for i, ch := range spec.choices {
		cv := any(ch)
		if spec.typ == "int" {
			if n, err := pyInt(ch); err == nil {
				cv = n
			}
		}
		if cv == v {
			return nil
		}
		quoted[i] = choiceRepr(cv)
	}
	return &ArgError{fmt.Sprintf("argument %s: invalid choice: %s (choose from %s)", spec.displayName(), choiceRepr(v), strings.Join(quoted, ", "))}
}

// looksLikeOption is argparse's test for an option string: a leading '-'
// that is not a negative number (the parser has no option that looks like
// one) and not '-' alone.
func looksLikeOption(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	if isNegativeNumber(a) {
		return false
	}
	return true
}

func isNegativeNumber(a string) bool {
	// argparse's _negative_number_matcher: ^-\d+$|^-\d*\.\d+$
	s := a[1:]
	digits, dot := 0, false
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.' && !dot && i < len(s)-1:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// matchOption finds the action of an option string as argparse's
// _parse_optional does: the whole string, then the part before '=', then,
// as SGLang's parser keeps allow_abbrev, every option string the part is a
// prefix of. More than one is "ambiguous option"; none leaves the string
// over (nil spec). option is the option string matched.
func matchOption(a string) (spec *flagSpec, option, val string, hasVal bool, err error) {
	if f, ok := optionIndex()[a]; ok {
		return f, a, "", false, nil
	}
	name := a
	if k, v, ok := strings.Cut(a, "="); ok {
		name, val, hasVal = k, v, true
		if f, ok := optionIndex()[name]; ok {
			return f, name, val, true, nil
		}
	}
	if !strings.HasPrefix(name, "--") {
		// A single-dash string: argparse matches it only against its own
		// short options, and -h is the only one.
		return nil, "", "", false, nil
	}
	var matches []string
	for _, f := range flagTable() {
		for _, o := range f.optionStrings() {
			if strings.HasPrefix(o, name) {
				matches = append(matches, o)
			}
		}
	}
	switch len(matches) {
	case 0:
		return nil, "", "", false, nil
	case 1:
		return optionIndex()[matches[0]], matches[0], val, hasVal, nil
	}
	return nil, "", "", false, &ArgError{fmt.Sprintf("ambiguous option: %s could match %s", a, strings.Join(matches, ", "))}
}

// mixLaunch mixes the launch the orchestrator names (LaunchEnv, RoundEnv)
// into a --sim-seed: without it, a --sim-seed in a campaign's engine command
// or scenario would give every launch, in every round, the same launch
// factor and drift, a persistent offset that no number of rounds reveals.
// The result is reproducible: the same seed and launch give the same draw.
func mixLaunch(seed int64, getenv func(string) string) (int64, string) {
	var mix []string
	for _, k := range []string{LaunchEnv, RoundEnv} {
		if v := getenv(k); v != "" {
			mix = append(mix, k+"="+v)
		}
	}
	if len(mix) == 0 {
		return seed, ""
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d", seed)
	for _, m := range mix {
		fmt.Fprintf(h, "\x00%s", m)
	}
	return int64(h.Sum64() &^ (1 << 63)), strings.Join(mix, " ")
}
