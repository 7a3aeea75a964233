package main

import (
	"context"
	"fmt"

	"github.com/bakeoff-dev/bakeoff/internal/buildinfo"
)

func init() {
	register(&command{
		Name:    "version",
		Summary: "print the bakeoff version",
		Usage:   "bakeoff version",
		Run: func(_ context.Context, e *env, _ []string) int {
			fmt.Fprintln(e.Stdout, "bakeoff", buildinfo.Version())
			return exitOK
		},
	})
}
