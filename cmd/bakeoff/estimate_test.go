package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bakeoff-dev/bakeoff/campaign"
)

// expectsRE finds where a shipped config's comments quote the planner:
// "`bakeoff validate` expects" at the config's own settings, or "with
// rounds: {min: 3, max: 16} it expects" and "with rounds: 6 it expects" at
// others.
var expectsRE = regexp.MustCompile("(`bakeoff validate` expects|with rounds: (?:\\{min: (\\d+), max: (\\d+)\\}|(\\d+)) it expects) ")

// commentText is the comments of a config file as one line: each comment's
// text after "# ", joined by single spaces.
func commentText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "# "); i >= 0 && strings.TrimSpace(line[:i]) == "" {
			words = append(words, strings.Fields(line[i+2:])...)
		}
	}
	return strings.Join(words, " ")
}

// TestShippedConfigsSayWhatThePlannerExpects: every shipped config says in
// its comments what `bakeoff validate` expects of it before any run (the
// rounds, launches, time and MDE of the plan line), and every other
// setting its comments advise is quoted with the planner's figures for it;
// each quote is the plan line the code prints today, so that the advice
// and the figures cannot drift apart.
func TestShippedConfigsSayWhatThePlannerExpects(t *testing.T) {
	configs, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("shipped configs: %v (%v)", configs, err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, cfg := range configs {
		t.Run(filepath.Base(cfg), func(t *testing.T) {
			c, err := campaign.Load(cfg)
			if err != nil {
				t.Fatal(err)
			}
			text := commentText(t, cfg)
			quotes := expectsRE.FindAllStringSubmatchIndex(text, -1)
			own := false
			for _, m := range quotes {
				cc := *c
				switch {
				case m[4] >= 0:
					lo, _ := strconv.Atoi(text[m[4]:m[5]])
					hi, _ := strconv.Atoi(text[m[6]:m[7]])
					cc.MinRounds, cc.Rounds = lo, hi
				case m[8] >= 0:
					n, _ := strconv.Atoi(text[m[8]:m[9]])
					cc.MinRounds, cc.Rounds = 0, n
				default:
					own = true
				}
				want := planNight(&cc, t.TempDir(), now).head()
				if got := text[m[1]:]; !strings.HasPrefix(got, want) {
					t.Errorf("%s says\n\t%s …\nthe planner:\n\t%s", text[m[0]:m[1]], got[:min(len(got), len(want)+20)], want)
				}
			}
			if !own {
				t.Errorf("no comment says what `bakeoff validate` expects of it; the planner:\n\t%s",
					planNight(c, t.TempDir(), now).head())
			}
		})
	}
}
