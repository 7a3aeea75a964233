package contention

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
	"github.com/bakeoff-dev/bakeoff/results"
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

// bakeoffBin is the binary under test, built once as `make build` builds it.
var bakeoffBin string

func TestMain(m *testing.M) {
	// Asked to be a contention worker: spin instead of testing.
	if Main() {
		return
	}
	os.Exit(testbin.Main(m, "contention", &bakeoffBin, true))
}

// The campaign's scenarios: the demo's baseline, the demo's fusion-flag
// variant (which changes nothing without a speculative step, so the pair is
// an A/A pair), and an exact twin of the baseline, a file of its own that
// extends it and changes nothing.
const (
	baseline = "baseline"
	noFusion = "baseline-nofusion"
	twin     = "baseline-twin"
)

// variants are the scenarios compared with the baseline, in campaign order.
var variants = []string{noFusion, twin}

// shape is a campaign's size: what it sweeps and how often.
type shape struct {
	// speed is the sim's --sim-speed; loadTime its --sim-load-time
	// (simulated, so loadTime/speed of wall time).
	speed    int
	loadTime string
	levels   []int
	// maxTokens per request; requests per level is the demo's auto.
	maxTokens int
	rounds    int
	// twinSlowdown, above 1, makes the twin no twin: its server runs that
	// many times slower (--sim-slowdown), a bias injected to show that a
	// test catches one.
	twinSlowdown float64
}

// world is one campaign's private machine: a campaign directory with the
// demo's scenario files, a sim state directory read by the fake nvidia-smi
// on PATH, a workdir (through TMPDIR, which the local host's default
// workdir and its lock follow) and a free port.
type world struct {
	root, config string
	env          []string
}

// newWorld writes a campaign of shape s under dir: configs/demo.yaml's
// engine, GPU, power and sweep blocks with the shape's speed, levels,
// tokens and rounds, no SLO (its limits are the demo's levels'), and the
// three scenarios.
func newWorld(t *testing.T, dir string, s shape, port int) *world {
	t.Helper()
	w := &world{root: dir}
	for _, d := range []string{"bin", "tmp", "sim-state", "scenarios", "configs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bakeoffBin, filepath.Join(dir, "bin", "nvidia-smi")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{baseline, noFusion} {
		data, err := os.ReadFile(filepath.Join("..", "..", "scenarios", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "scenarios", name+".yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	twinFile := "# An exact copy of the baseline under another name.\nname: " + twin + "\ndescription: the baseline again\nextends: " + baseline + "\n"
	if s.twinSlowdown > 1 {
		twinFile += fmt.Sprintf("args:\n  sim-slowdown: %g\n", s.twinSlowdown)
	}
	if err := os.WriteFile(filepath.Join(dir, "scenarios", twin+".yaml"), []byte(twinFile), 0o644); err != nil {
		t.Fatal(err)
	}
	w.config = filepath.Join(dir, "configs", "contention.yaml")
	if err := os.WriteFile(w.config, demoConfig(t, s, port), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bin") + ":" + os.Getenv("PATH")
	w.env = append(os.Environ(), "PATH="+path, "BAKEOFF_SIM_STATE="+filepath.Join(dir, "sim-state"),
		"TMPDIR="+filepath.Join(dir, "tmp"), "COLUMNS=120")
	return w
}

// demoConfig is configs/demo.yaml with the shape's figures and this
// campaign's port and scenarios.
func demoConfig(t *testing.T, s shape, port int) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "configs", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	top := doc.Content[0]
	engine := mapValue(t, top, "engine")
	cmd := mapValue(t, engine, "command")
	for i, n := range cmd.Content {
		if i+1 >= len(cmd.Content) {
			break
		}
		switch n.Value {
		case "--sim-speed":
			cmd.Content[i+1].Value = strconv.Itoa(s.speed)
		case "--sim-load-time":
			cmd.Content[i+1].Value = s.loadTime
		}
	}
	mapValue(t, engine, "port").Value = strconv.Itoa(port)
	sweep := mapValue(t, top, "sweep")
	levels := mapValue(t, sweep, "concurrency")
	levels.Content = nil
	for _, c := range s.levels {
		levels.Content = append(levels.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(c)})
	}
	mapValue(t, sweep, "max_tokens").Value = strconv.Itoa(s.maxTokens)
	scen := mapValue(t, top, "scenarios")
	scen.Content = nil
	for _, n := range []string{baseline, noFusion, twin} {
		scen.Content = append(scen.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: n})
	}
	rounds := mapValue(t, top, "rounds")
	*rounds = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(s.rounds)}
	dropKey(top, "slo")
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mapValue is the value of key in mapping m.
func mapValue(t *testing.T, m *yaml.Node, key string) *yaml.Node {
	t.Helper()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	t.Fatalf("configs/demo.yaml: no %s", key)
	return nil
}

// dropKey removes key and its value from mapping m.
func dropKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// campaign is what one campaign gave.
type campaign struct {
	kind     Kind
	seed     int
	dir      string
	verdict  *verdict.Verdict
	calls    []Call
	doubted  int
	compared int
	// delta is each variant's change against the baseline by level (the
	// paired estimate, percent), and rounds its per-round log ratios.
	delta  map[string]map[int]float64
	rounds []roundDiff
	// load1 are the one-minute load averages at the start and the end.
	load1 [2]float64
	wall  time.Duration
}

// roundDiff is one round's log ratio of a variant's throughput to the
// baseline's at one level, with where the two launches stood.
type roundDiff struct {
	variant string
	level   int
	round   int
	logPct  float64 // 100 × log(variant / baseline)
	// vPos and bPos are the two launches' positions in their round
	// (0-based); vPrev and bPrev the scenarios launched just before each
	// ("" for the campaign's first launch).
	vPos, bPos   int
	vPrev, bPrev string
}

// runCampaign runs the campaign of world w, labelled with the kind of
// contention the caller keeps running around it, notes what ran it beside
// the run (campaignFile), and reads its verdict. It runs beside others, so
// it returns its failure.
func runCampaign(w *world, k Kind, seed int) (campaign, error) {
	start := time.Now()
	note := campaignNote{Kind: k, Seed: seed, Started: start.UTC(), LoadStart: loadAverage()}
	ctx, cancel := context.WithTimeout(context.Background(), campaignTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bakeoffBin, "run", w.config, "--out", filepath.Join(w.root, runDir))
	cmd.Env, cmd.Dir = w.env, w.root
	// A test killed by its timeout stops its campaign as Ctrl-C would.
	cmd.SysProcAttr = campaignAttr()
	out, err := cmd.CombinedOutput()
	note.WallS, note.LoadEnd = time.Since(start).Seconds(), loadAverage()
	if err != nil {
		return campaign{}, fmt.Errorf("bakeoff run (%s, seed %d): %w\n%s", k, seed, err, tail(out, 40))
	}
	data, err := json.MarshalIndent(note, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(w.root, campaignFile), data, 0o644)
	}
	if err != nil {
		return campaign{}, fmt.Errorf("noting campaign %s: %w", w.root, err)
	}
	return readCampaign(w.root, verdict.Options{})
}

// campaignDir is where underLoad keeps campaign seed of kind k under dir.
func campaignDir(dir string, k Kind, seed int) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%03d", k, seed))
}

// runDir and campaignFile are a campaign's run directory and its note,
// inside the campaign's own directory.
const (
	runDir       = "run"
	campaignFile = "campaign.json"
)

// campaignNote is what the run directory cannot say about a campaign: the
// contention around it and the machine's load.
type campaignNote struct {
	Kind    Kind      `json:"kind"`
	Seed    int       `json:"seed"`
	Started time.Time `json:"started"`
	// WallS is the campaign's wall time, seconds; LoadStart and LoadEnd
	// the machine's one-minute load average before and after it.
	WallS     float64 `json:"wall_s"`
	LoadStart float64 `json:"load_start"`
	LoadEnd   float64 `json:"load_end"`
}

// readCampaign reads the campaign kept in dir (its note and its run) and
// judges it with o.
func readCampaign(dir string, o verdict.Options) (campaign, error) {
	var note campaignNote
	data, err := os.ReadFile(filepath.Join(dir, campaignFile))
	if err != nil {
		return campaign{}, err
	}
	if err := json.Unmarshal(data, &note); err != nil {
		return campaign{}, fmt.Errorf("reading %s: %w", filepath.Join(dir, campaignFile), err)
	}
	c := campaign{kind: note.Kind, seed: note.Seed, dir: filepath.Join(dir, runDir),
		wall: time.Duration(note.WallS * float64(time.Second)), load1: [2]float64{note.LoadStart, note.LoadEnd}}
	run, err := results.ReadRun(c.dir)
	if err != nil {
		return c, err
	}
	v, err := judge.Run(run, o)
	if err != nil {
		return c, err
	}
	c.verdict, c.calls = v, Calls(v)
	c.doubted, c.compared = Doubted(v)
	c.delta = map[string]map[int]float64{}
	for _, name := range variants {
		c.delta[name] = map[int]float64{}
		for _, row := range v.Rows {
			if cell := v.Cell(row.Level, name); cell != nil && cell.Compared {
				c.delta[name][row.Level.Concurrency] = cell.DeltaPct
			}
		}
	}
	c.rounds = roundDiffs(v, run)
	return c, nil
}

// underLoad runs campaigns seeds[0], seeds[1], … of shape s at once, each
// in its own directory under dir, while contention of kind k runs, started
// before the first and stopped after the last.
func underLoad(t *testing.T, dir string, s shape, k Kind, seeds []int) []campaign {
	return underLoadWith(t, dir, s, k, seeds, nil)
}

// underLoadWith is underLoad with setup, when not nil, called on each
// campaign's world before any runs (a study's change to its campaign).
func underLoadWith(t *testing.T, dir string, s shape, k Kind, seeds []int, setup func(w *world, seed int)) []campaign {
	t.Helper()
	worlds := make([]*world, len(seeds))
	for i, seed := range seeds {
		worlds[i] = newWorld(t, campaignDir(dir, k, seed), s, testbin.FreePort(t))
		if setup != nil {
			setup(worlds[i], seed)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	load, err := Start(k, exe, uint64(seeds[0]))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]campaign, len(seeds))
	errs := make([]error, len(seeds))
	var wg sync.WaitGroup
	for i, seed := range seeds {
		wg.Go(func() { out[i], errs[i] = runCampaign(worlds[i], k, seed) })
	}
	wg.Wait()
	if err := load.Stop(); err != nil {
		t.Error(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// campaignTimeout bounds one campaign: a few minutes on a loaded machine.
const campaignTimeout = 20 * time.Minute

// roundDiffs are every variant's per-round log ratios against the baseline,
// with the launches' positions.
func roundDiffs(v *verdict.Verdict, run *results.Run) []roundDiff {
	seq := map[int]string{} // campaign position → scenario
	for _, name := range run.Manifest.Scenarios {
		for _, l := range run.Launches(name) {
			seq[l.Order] = name
		}
	}
	roundStart := map[int]int{} // round → position of its first launch
	for o, name := range seq {
		for _, l := range run.Launches(name) {
			if l.Order == o {
				if s, ok := roundStart[l.Round]; !ok || o < s {
					roundStart[l.Round] = o
				}
			}
		}
	}
	b := v.Scenario(v.Baseline)
	var out []roundDiff
	for _, name := range variants {
		s := v.Scenario(name)
		if s == nil || b == nil {
			continue
		}
		for _, lb := range b.Levels {
			lv := s.Level(lb.Level)
			if lv == nil {
				continue
			}
			for _, x := range lb.Launches {
				for _, y := range lv.Launches {
					if x.Round != y.Round || x.Throughput <= 0 || y.Throughput <= 0 {
						continue
					}
					out = append(out, roundDiff{variant: name, level: lb.Level.Concurrency, round: x.Round,
						logPct: 100 * math.Log(y.Throughput/x.Throughput),
						vPos:   y.Order - roundStart[y.Round], bPos: x.Order - roundStart[x.Round],
						vPrev: seq[y.Order-1], bPrev: seq[x.Order-1]})
				}
			}
		}
	}
	return out
}

// loadAverage is the machine's one-minute load average.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// tail is the last n lines of out.
func tail(out []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// summary is one campaign in a line.
func (c campaign) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s seed %d (%.0fs, load %.1f→%.1f, %d of %d comparisons doubted):", c.kind, c.seed, c.wall.Seconds(),
		c.load1[0], c.load1[1], c.doubted, c.compared)
	for _, name := range variants {
		fmt.Fprintf(&b, " %s", name)
		for _, row := range c.verdict.Rows {
			if d, ok := c.delta[name][row.Level.Concurrency]; ok {
				fmt.Fprintf(&b, " %+.1f", d)
			}
		}
		b.WriteString(";")
	}
	if len(c.calls) == 0 {
		b.WriteString(" no call")
	}
	for _, call := range c.calls {
		b.WriteString(" CALL " + call.String() + ";")
	}
	return b.String()
}
