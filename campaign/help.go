package campaign

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bakeoff-dev/bakeoff/engine"
)

// HelpCall is how the preflight asks a scenario's engine on its host which
// flags it accepts: the command that prints its help, in the environment
// the scenario's server gets.
type HelpCall struct {
	Argv []string
	Env  map[string]string
	// Command is Env and Argv as one POSIX sh line, `env -- K=V ... argv...`,
	// quoted as Launch.Command is.
	Command string
	// Format is the help's format (engine.HelpArgparse, …); Underscores
	// says the engine takes '_' for '-' in a flag's name (vLLM).
	Format      string
	Underscores bool
	// VersionCommand is the line that prints the engine's version, quoted
	// as Command; empty when the profile has no version call (or the
	// campaign's engine.help replaces the launcher's).
	VersionCommand string
}

// RenderHelp builds the help call of scenario s under campaign c, on the
// host whose paths on gives: engine.help when the campaign gives one, else
// the launcher the launch uses (the profile's, or engine.command) followed
// by the profile's help words. It returns nil, and no error, when the
// engine cannot be asked: engine.help is off, the scenario writes its whole
// launch, or its engine (generic) has no help call of its own.
func RenderHelp(c *Campaign, s *Scenario, on On) (*HelpCall, error) {
	if c == nil || s == nil {
		return nil, fmt.Errorf("render help: no campaign or scenario")
	}
	if c.Engine.HelpOff {
		return nil, nil
	}
	p := s.Profile()
	if p == nil {
		return nil, fmt.Errorf("render help of scenario %s: unknown engine %q", s.Name, s.Engine)
	}
	expand := func(w string) string {
		if on.Bakeoff != "" {
			w = strings.ReplaceAll(w, TokenBakeoff, on.Bakeoff)
		}
		if on.Workdir != "" {
			w = strings.ReplaceAll(w, TokenWorkdir, on.Workdir)
		}
		return w
	}
	h := &HelpCall{Format: c.Engine.HelpFormat}
	var version []string // the version call's words, when the profile has one
	switch {
	case len(c.Engine.Help) > 0:
		for _, w := range c.Engine.Help {
			h.Argv = append(h.Argv, expand(w))
		}
		if p.Help != nil {
			h.Underscores = p.Help.Underscores
			if h.Format == "" {
				h.Format = p.Help.Format
			}
		}
		if h.Format == "" {
			return nil, fmt.Errorf("render help of scenario %s: engine.help needs engine.help_format (%s)",
				s.Name, strings.Join(engine.HelpFormats, ", "))
		}
	case p.Help == nil || len(s.Launch) > 0:
		// A whole launch of the scenario's own is no launcher followed by
		// flags, so no help call can be made of it.
		return nil, nil
	default:
		python := c.Host.Python
		if python == "" {
			python = DefaultPython
		}
		if len(c.Engine.Command) > 0 {
			for _, w := range c.Engine.Command {
				h.Argv = append(h.Argv, expand(w))
			}
		} else {
			for _, w := range p.Launcher {
				h.Argv = append(h.Argv, strings.ReplaceAll(w, "{python}", python))
			}
		}
		if len(p.Help.Version) > 0 {
			version = append(slices.Clone(h.Argv), p.Help.Version...)
		}
		h.Argv = append(h.Argv, p.Help.Args...)
		h.Underscores = p.Help.Underscores
		if h.Format == "" {
			h.Format = p.Help.Format
		}
	}
	env := maps.Clone(c.Engine.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, s.Env)
	for k, v := range env {
		env[k] = expand(v)
	}
	if err := checkLaunch(h.Argv, env); err != nil {
		return nil, fmt.Errorf("render help of scenario %s: %w", s.Name, err)
	}
	line := func(argv []string) string {
		var b strings.Builder
		b.WriteString("env --")
		for _, k := range slices.Sorted(maps.Keys(env)) {
			b.WriteString(" " + k + "=" + ShellQuote(env[k]))
		}
		b.WriteString(" " + ShellJoin(argv))
		return b.String()
	}
	h.Env, h.Command = env, line(h.Argv)
	if version != nil {
		h.VersionCommand = line(version)
	}
	return h, nil
}
