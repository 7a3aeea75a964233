package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Exit codes, as documented in the README.
const (
	exitOK       = 0 // all good
	exitFailed   = 1 // the work ran but something failed or regressed
	exitBadInput = 2 // usage or configuration error
)

// command is one subcommand. Each lives in its own file and registers itself
// from init, so subcommands can grow independently.
type command struct {
	Name    string
	Summary string // one line for `bakeoff help`
	Usage   string // full usage text for `bakeoff help NAME`
	Run     func(ctx context.Context, e *env, args []string) int
	Hidden  bool
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.Name]; dup {
		panic("duplicate command " + c.Name)
	}
	commands[c.Name] = c
}

// usageError marks an error caused by how the command was called; it maps to
// exit code 2.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		printHelp(e)
		return exitBadInput
	}
	name := args[0]
	switch name {
	case "-h", "--help":
		name = "help"
	case "--version":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(e.Stderr, "bakeoff: unknown command %q (see 'bakeoff help')\n", args[0])
		return exitBadInput
	}
	return c.Run(ctx, e, args[1:])
}

func printHelp(e *env) {
	fmt.Fprintln(e.Stdout, "bakeoff runs A/B campaigns of LLM-serving configurations on a GPU host.")
	fmt.Fprintln(e.Stdout, "\nUsage: bakeoff COMMAND [ARGS]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.Hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(e.Stdout, "  %-9s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(e.Stdout, "\nRun 'bakeoff help COMMAND' for a command's flags.")
}

func init() {
	register(&command{
		Name:    "help",
		Summary: "show commands, or one command's usage",
		Run: func(_ context.Context, e *env, args []string) int {
			if len(args) == 0 {
				printHelp(e)
				return exitOK
			}
			c, ok := commands[args[0]]
			if !ok {
				fmt.Fprintf(e.Stderr, "bakeoff: unknown command %q\n", args[0])
				return exitBadInput
			}
			fmt.Fprintln(e.Stdout, strings.TrimSpace(c.Usage))
			return exitOK
		},
	})
}
