package preflight

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
)

// HelpTimeout bounds one help command, and the version command after it: a
// command that never returns (an import waiting on a lock, a wrapper
// waiting for input) would otherwise hold the preflight, and with it the
// campaign, for as long as it hangs, and leave a process behind. A Python
// engine imports its package (torch, CUDA libraries) before argparse
// prints anything, which takes seconds, more on a cold filesystem.
const HelpTimeout = 30 * time.Second

// Runner runs a shell command on a host; remote.Host is one. Cancelling
// ctx must end the command and what it started: remote.Local kills the
// process group it started the command in, remote.SSH's wrapper the
// session (setsid) it started it in on the host.
type Runner interface {
	Name() string
	Run(ctx context.Context, cmd string) (stdout, stderr []byte, err error)
}

// Call is one help command to run on a host.
type Call struct {
	// Command is the sh line that prints the help (`env -- K=V argv…`,
	// campaign.HelpCall's); Dir, when set, is where it runs, as the launch
	// runs in the workdir.
	Command, Dir string
	// Format is the help's format; Underscores is set for vLLM's
	// FlexibleArgumentParser (Table.Underscores and Table.JSONKeys).
	Format      string
	Underscores bool
	// VersionCommand, when set, prints the engine's version; it is run
	// once the help was read, from Dir too.
	VersionCommand string
	// Engine names the engine whose help it is (engine.SGLang, …), when
	// the caller knows: Table.Engine, for the flags that engine removed.
	Engine string
	// Timeout bounds each command; zero is HelpTimeout.
	Timeout time.Duration
}

// timeout is the bound of each of c's commands.
func (c Call) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return HelpTimeout
}

// Help is what an engine build said of itself on a host.
type Help struct {
	Host, Command string
	Table         *Table
	// Hash is "sha256:" and the hex digest of the help text read: two runs
	// whose engines print different helps ran different builds (or
	// installs); the same hash, very likely the same one.
	Hash string
	// Version is the engine's version when the help says it; else empty.
	Version string
	// Took is how long the help command ran, round trip included.
	Took time.Duration
}

// CommandError is a help command that failed: the engine is not installed
// there, the python has no such module, the command is wrong.
type CommandError struct {
	Host, Command string
	Err           error
	// Output is the end of what the command printed (stderr first).
	Output string
}

func (e *CommandError) Error() string {
	msg := fmt.Sprintf("asking the engine for its flags on %s failed: %s: %v", e.Host, e.Command, e.Err)
	var hung *HungError
	if errors.As(e.Err, &hung) {
		// It names the command and the host itself.
		msg = "asking the engine for its flags: " + hung.Error()
	}
	if e.Output != "" {
		msg += "\n" + e.Output
	}
	return msg
}

func (e *CommandError) Unwrap() error { return e.Err }

// HungError is a command still running at its bound: the runner killed it,
// with what it started, when the bound cancelled it.
type HungError struct {
	Host, Command string
	After         time.Duration
}

func (e *HungError) Error() string {
	return fmt.Sprintf("`%s` on %s did not return within %s; killed", e.Command, e.Host, e.After)
}

// UnreadableError is a help command that ran but printed nothing its
// format's parser reads (a wrapper's own usage, an old `bakeoff sim`): the
// flags cannot be checked, which the caller reports and goes on.
type UnreadableError struct {
	Host, Command, Format string
	Err                   error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("what %s printed on %s is not a %s help (%v): its flags were not checked", e.Command, e.Host, e.Format, e.Err)
}

func (e *UnreadableError) Unwrap() error { return e.Err }

// outputTail is how much of a failed command's output an error keeps.
const outputTail = 600

// ProgramError is a program that does not run on a host: not installed
// there (the shell's "No such file or directory", python's "No module
// named …"), failing, or still running at its bound (a *HungError inside).
type ProgramError struct {
	Host, Command string
	Err           error
	// Output is the end of what the command printed (stderr first).
	Output string
}

func (e *ProgramError) Error() string {
	detail := e.Err.Error()
	msg := fmt.Sprintf("`%s` on %s: %s", e.Command, e.Host, detail)
	var hung *HungError
	if errors.As(e.Err, &hung) || strings.Contains(detail, e.Command) {
		// The runner's error names the command and the host itself
		// (remote.ExitError, with the command's stderr).
		msg = detail
	}
	if e.Output != "" && !strings.Contains(detail, e.Output) {
		msg += "\n" + e.Output
	}
	return msg
}

func (e *ProgramError) Unwrap() error { return e.Err }

// Runs runs c's command on r, bounded as a help command is (c.Timeout, else
// HelpTimeout), and reports whether it exits 0, reading nothing of what it
// prints: how a program whose flags are not checked here (SGLang's router)
// is found missing before anything is launched. A failure is a
// *ProgramError; a ctx cancelled by the caller (Ctrl-C) is ctx's error.
func Runs(ctx context.Context, r Runner, c Call) error {
	stdout, stderr, err := run(ctx, r, c, c.Command)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &ProgramError{Host: r.Name(), Command: c.Command, Err: err, Output: tail(string(stderr)+string(stdout), outputTail)}
}

// Probe runs c on r and reads the help it prints. A command that fails and
// prints no help, or that is still running at c's bound (killed then, its
// error a *HungError inside), is a *CommandError; one that prints
// something else is an *UnreadableError.
func Probe(ctx context.Context, r Runner, c Call) (*Help, error) {
	start := time.Now()
	stdout, stderr, err := run(ctx, r, c, c.Command)
	took := time.Since(start)
	var hung *HungError
	if errors.As(err, &hung) {
		// What it printed before it was killed may be a help cut short,
		// which would read as one without the options it did not reach.
		return nil, &CommandError{Host: r.Name(), Command: c.Command, Err: err, Output: tail(string(stderr)+string(stdout), outputTail)}
	}
	// argparse and click print the help on stdout; a wrapper's usage
	// (Go's flag package) goes to stderr.
	text := stdout
	if len(strings.TrimSpace(string(text))) == 0 {
		text = stderr
	}
	t, perr := Parse(c.Format, text)
	if perr != nil {
		if err != nil || ctx.Err() != nil {
			if err == nil {
				err = ctx.Err()
			}
			return nil, &CommandError{Host: r.Name(), Command: c.Command, Err: err, Output: tail(string(stderr)+string(stdout), outputTail)}
		}
		return nil, &UnreadableError{Host: r.Name(), Command: c.Command, Format: c.Format, Err: perr}
	}
	if c.Underscores {
		t.Underscores, t.JSONKeys = true, true
	}
	t.Engine = c.Engine
	sum := sha256.Sum256(text)
	h := &Help{Host: r.Name(), Command: c.Command, Table: t, Hash: "sha256:" + hex.EncodeToString(sum[:]), Took: took}
	if m := versionRe.FindSubmatch(text); m != nil {
		h.Version = string(m[1])
	}
	if c.VersionCommand != "" {
		h.Version = version(ctx, r, c)
	}
	t.Version = h.Version
	return h, nil
}

// run runs command on r, from c.Dir when set, bounded by c's timeout. A
// command the bound stops is a *HungError; one the caller's ctx stops
// (Ctrl-C) is the runner's error, as before.
func run(ctx context.Context, r Runner, c Call, command string) (stdout, stderr []byte, err error) {
	line := command
	if c.Dir != "" {
		line = "cd " + campaign.ShellQuote(c.Dir) + " && " + line
	}
	bound := c.timeout()
	bctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	stdout, stderr, err = r.Run(bctx, line)
	if err != nil && errors.Is(bctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		err = &HungError{Host: r.Name(), Command: command, After: bound}
	}
	return stdout, stderr, err
}

// llamaVersionRe is llama.cpp's --version (common/arg.cpp prints
// "version: BUILD (COMMIT)" on stderr, then what it was built with).
var llamaVersionRe = regexp.MustCompile(`(?m)^version: (\d+) \(([0-9a-z]+)\)`)

// version runs c's version command and returns what it says: llama.cpp's
// as its /props build_info writes it (b<build>-<commit>), so that the two
// compare; another's first line. A version command that fails, or hangs
// and is killed at the bound, says nothing: the help's hash still tells
// builds apart.
func version(ctx context.Context, r Runner, c Call) string {
	stdout, stderr, err := run(ctx, r, c, c.VersionCommand)
	if err != nil {
		return ""
	}
	out := string(stdout) + string(stderr)
	if m := llamaVersionRe.FindStringSubmatch(out); m != nil {
		return "b" + m[1] + "-" + m[2]
	}
	first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return tail(first, 80)
}

// versionRe finds a version a help states about its program ("version:
// 6890 (5eca4e3ca)", "vLLM version 0.29.0"); most print none.
var versionRe = regexp.MustCompile(`(?mi)^\s*(?:\S+\s+)?version:?\s+(v?\d+[\w.+-]*(?: \([0-9a-f]{7,}\))?)\s*$`)

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
