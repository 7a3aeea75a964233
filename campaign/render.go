package campaign

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// Launch is how to start one scenario's server on its host.
type Launch struct {
	// Argv is the engine's full command: launcher, fixed flags (model, host,
	// port), then the scenario's args in key order.
	Argv []string
	// Env is the campaign's engine.env merged with the scenario's env
	// (scenario values win).
	Env map[string]string
	// Command is Env and Argv as one POSIX sh line, `env -- K=V ... argv...`,
	// every word quoted so that `sh -c Command` hands each byte to the engine
	// unchanged and the shell interprets nothing.
	Command string
	// FlagsAt is where the scenario's args begin in Argv; FlagKeys names,
	// for each word from there on, the arg key it renders (the flag and its
	// values alike), so a word the engine refuses leads back to the line of
	// the scenario file that wrote it.
	FlagsAt  int
	FlagKeys []string
	// Dirs are the directories the engine needs to exist before it starts
	// (the values of its profile's DirArgs, e.g. llama.cpp's
	// --slot-save-path), absolute: a relative one is taken from the workdir,
	// where the server starts. The launch creates them.
	Dirs []string
}

// On is where a launch is rendered for: the paths on its host.
type On struct {
	// Bakeoff is the bakeoff binary on the host, substituted for {bakeoff};
	// empty leaves the token as written (a display before the path is known).
	Bakeoff string
	// Workdir is the host's workdir as it really is (the local default
	// resolved, {host} expanded), substituted for {workdir}; empty leaves
	// the token as written.
	Workdir string
	// Port and Listen, when set, replace engine.port and the loopback as
	// the port and address the server listens on (an instance of a
	// deployment); Expand, when set, expands a deployment's placeholders
	// in every word and variable first (RenderInstance).
	Port   int
	Listen string
	Expand func(string) string
}

// Tokens expanded in command words. {bakeoff} works in engine.command and in
// a scenario's launch; {model} and {port} only in launch, where the fixed
// flags are the user's to write. {workdir} works everywhere, arg and env
// values too: a directory the engine writes to (llama.cpp's slot save path)
// belongs under the workdir, whose real path differs between hosts and,
// for `host: local`, between users.
const (
	TokenBakeoff = "{bakeoff}"
	TokenModel   = "{model}"
	TokenPort    = "{port}"
	TokenWorkdir = "{workdir}"
)

// Render builds the launch of scenario s under campaign c, on the host
// whose paths on gives.
//
// The default launchers are the engine profiles' (package engine), e.g.:
//
//	sglang:    <host.python> -m sglang.launch_server --model-path MODEL --host 127.0.0.1 --port PORT ARGS
//	vllm:      vllm serve MODEL --host 127.0.0.1 --port PORT ARGS
//	llamacpp:  llama-server --model MODEL --host 127.0.0.1 --port PORT ARGS
//	trtllm:    trtllm-serve MODEL --host 127.0.0.1 --port PORT ARGS
//
// engine.command replaces the launcher prefix (`python3 -m
// sglang.launch_server`, `vllm serve`) and keeps the rest; a scenario's
// launch replaces the whole command, and ARGS are appended to it.
func Render(c *Campaign, s *Scenario, on On) (*Launch, error) {
	if c == nil || s == nil {
		return nil, errors.New("render: no campaign or scenario")
	}
	port := c.Engine.Port
	if port == 0 {
		port = DefaultPort
	}
	if on.Port != 0 {
		port = on.Port
	}
	listen := launcherHost
	if on.Listen != "" {
		listen = on.Listen
	}
	// workdir expands {workdir} and, first, a deployment's placeholders:
	// every word and variable passes through it.
	workdir := func(w string) string {
		if on.Expand != nil {
			w = on.Expand(w)
		} else {
			w = expandSlotPorts(w, 0) // one server has its host to itself
		}
		if on.Workdir != "" {
			w = strings.ReplaceAll(w, TokenWorkdir, on.Workdir)
		}
		return w
	}
	expand := func(w string, launch bool) string {
		if on.Bakeoff != "" {
			w = strings.ReplaceAll(w, TokenBakeoff, on.Bakeoff)
		}
		w = workdir(w)
		if launch {
			w = strings.ReplaceAll(w, TokenModel, s.Model)
			w = strings.ReplaceAll(w, TokenPort, strconv.Itoa(port))
		}
		return w
	}
	var argv []string
	if len(s.Launch) > 0 {
		for _, w := range s.Launch {
			argv = append(argv, expand(w, true))
		}
	} else {
		name := s.Engine
		if name == "" {
			name = DefaultEngine
		}
		if s.Model == "" && name != engine.Generic {
			return nil, fmt.Errorf("render scenario %s: no model", s.Name)
		}
		python := c.Host.Python
		if python == "" {
			python = DefaultPython
		}
		p := engine.Lookup(name)
		if p == nil {
			return nil, fmt.Errorf("render scenario %s: unknown engine %q", s.Name, name)
		}
		var prefix []string
		for _, w := range c.Engine.Command {
			prefix = append(prefix, expand(w, false))
		}
		var err error
		if argv, err = p.LaunchArgv(prefix, python, s.Model, listen, port); err != nil {
			return nil, fmt.Errorf("render scenario %s: %w", s.Name, err)
		}
	}
	var dirArgs []string
	if p := s.Profile(); p != nil {
		dirArgs = p.DirArgs
	}
	var dirs, keys []string
	flagsAt := len(argv)
	for _, a := range s.Args {
		flag := "--" + a.Key
		if a.Bare || len(a.Values) == 0 {
			argv = append(argv, flag)
			keys = append(keys, a.Key)
			continue
		}
		for _, v := range a.Values {
			v = workdir(v)
			argv = append(argv, flag, v)
			keys = append(keys, a.Key, a.Key)
			if slices.Contains(dirArgs, a.Key) && v != "" {
				dirs = append(dirs, absUnder(on.Workdir, v))
			}
		}
	}
	env := maps.Clone(c.Engine.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, s.Env)
	for k, v := range env {
		env[k] = workdir(v)
	}
	if err := checkLaunch(argv, env); err != nil {
		return nil, fmt.Errorf("render scenario %s: %w", s.Name, err)
	}
	// Variables in name order for a stable line; a name is a plain word, so
	// only the value needs quoting.
	var b strings.Builder
	b.WriteString("env --")
	for _, k := range slices.Sorted(maps.Keys(env)) {
		b.WriteString(" " + k + "=" + ShellQuote(env[k]))
	}
	b.WriteString(" " + ShellJoin(argv))
	return &Launch{Argv: argv, Env: env, Command: b.String(), Dirs: dirs, FlagsAt: flagsAt, FlagKeys: keys}, nil
}

// absUnder is p, or p under workdir when p is relative: the server starts in
// the workdir, so that is where a relative path of its points.
func absUnder(workdir, p string) string {
	if path.IsAbs(p) || workdir == "" {
		return p
	}
	return path.Join(workdir, p)
}

// checkLaunch refuses what cannot travel through `sh -c` intact: NUL (no
// process argument can hold it), newlines (they would end the command line
// in logs and pid files), bad variable names, and a first word that env(1)
// would take for an assignment.
func checkLaunch(argv []string, env map[string]string) error {
	if len(argv) == 0 || argv[0] == "" {
		return errors.New("empty command")
	}
	if strings.ContainsRune(argv[0], '=') {
		return fmt.Errorf("command %q contains '=', which env(1) would take for a variable", argv[0])
	}
	for _, w := range argv {
		if strings.ContainsAny(w, "\x00\n\r") {
			return fmt.Errorf("command word %q contains a NUL or a newline", w)
		}
	}
	for k, v := range env {
		if !envNameRe.MatchString(k) {
			return fmt.Errorf("invalid environment variable name %q", k)
		}
		if strings.ContainsAny(v, "\x00\n\r") {
			return fmt.Errorf("environment variable %s contains a NUL or a newline", k)
		}
	}
	return nil
}
