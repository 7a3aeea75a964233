package main

import (
	"fmt"
	"io"

	"github.com/bakeoff-dev/bakeoff/campaign"
)

// spaceLines are the lines validate and the dry run show for each of the
// campaign's spaces, each under its label ("space" on a space's first
// line): its grid and the points it keeps, then what each constraint and
// exclusion dropped.
func spaceLines(c *campaign.Campaign) (labels, lines []string) {
	for _, sp := range c.Spaces {
		for i, line := range sp.Lines() {
			label := ""
			if i == 0 {
				label = "space"
			}
			labels = append(labels, label)
			lines = append(lines, line)
		}
	}
	return labels, lines
}

// printSpaces writes validate's lines for the campaign's spaces.
func printSpaces(w io.Writer, c *campaign.Campaign) {
	labels, lines := spaceLines(c)
	for i, line := range lines {
		fmt.Fprintf(w, "%-10s%s\n", labels[i], line)
	}
}
