package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/golden"
)

const spaceConfig = "testdata/validate/space/configs/campaign.yaml"

// spaceSummary is what validate and the dry run say of the test
// campaign's space: its grid, its points and what each rule dropped.
var spaceSummary = []string{
	"eagle3 (testdata/validate/space/scenarios/eagle3.yaml:7:1): 2 steps × 2 topk × 3 draft × 2 sync = 24 combinations, 9 points",
	"space.constraints[0] (line 14) drops 8: speculative_eagle_topk > 1 || speculative_num_draft_tokens == speculative_num_steps + 1",
	"space.constraints[1] (line 15) drops 2: speculative_num_draft_tokens <= speculative_eagle_topk * speculative_num_steps + 1",
	"space.exclude[0] (line 17) drops 5: {speculative-eagle-topk: 4, disable-overlap-schedule: false}",
}

// TestValidateSpace: validate prints a campaign with a space as one of
// scenarios written by hand, each point with its command line, after the
// space's summary.
func TestValidateSpace(t *testing.T) {
	e, out, errOut := testEnv()
	if code := run(context.Background(), e, []string{"validate", spaceConfig}); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	text := out.String()
	for i, line := range spaceSummary {
		label := "          "
		if i == 0 {
			label = "space     "
		}
		if !strings.Contains(text, "\n"+label+line+"\n") {
			t.Errorf("validate does not show %q", label+line)
		}
	}
	golden.Check(t, filepath.Join("testdata", "validate", "space.golden"), out.Bytes())
}

// TestDryRunSpace: the dry run launches every point of the space in every
// round and says, in its summary, what the space expanded to.
func TestDryRunSpace(t *testing.T) {
	c := loadDry(t, spaceConfig)
	var out bytes.Buffer
	if err := dryRun(context.Background(), &out, c, dryOptions(c)); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	want := []string{
		"launches  30 in 3 rounds, in this order:",
		"space     eagle3 (testdata/validate/space/scenarios/eagle3.yaml:7:1): 2 steps × 2 topk × 3 draft × 2 sync = 24\n" +
			"          combinations, 9 points\n",
		"          space.exclude[0] (line 17) drops 5: {speculative-eagle-topk: 4, disable-overlap-schedule: false}\n",
		"### eagle3.steps3.topk4.draft8.sync-on: launch ",
		"--speculative-num-draft-tokens 8 --speculative-num-steps 3",
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the dry run does not show %q", w)
		}
	}
}

// TestSpaceExampleInDocs: the EAGLE-3 space docs/CONFIG.md shows loads,
// and the lines validate prints for it are the ones the documentation
// quotes.
func TestSpaceExampleInDocs(t *testing.T) {
	dir := filepath.Join("testdata", "validate", "space-docs")
	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "CONFIG.md"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join(dir, "scenarios", "eagle3.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(docs, example) {
		t.Errorf("docs/CONFIG.md does not show %s as it is", filepath.Join(dir, "scenarios", "eagle3.yaml"))
	}
	c := loadDry(t, filepath.Join(dir, "configs", "campaign.yaml"))
	var shown bytes.Buffer
	printSpaces(&shown, c)
	for _, line := range strings.Split(strings.TrimSpace(shown.String()), "\n") {
		line = strings.ReplaceAll(line, dir+"/", "")
		if !bytes.Contains(docs, []byte(line)) {
			t.Errorf("docs/CONFIG.md does not quote %q", line)
		}
	}
}
