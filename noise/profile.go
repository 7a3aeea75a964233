// Package noise keeps a host's noise profile: how much one round's paired
// difference between two launches varies on that host with that engine and
// model, as the campaigns run there measured it. Launch-to-launch variation
// is a property of the host and the engine, not of one night, so the next
// campaign there can start from it (a prior the verdict uses only while
// tonight's own noise agrees with it, verdict/prior.go) and `validate` can
// forecast from it instead of from assumptions.
//
// A profile lives in the results root, one JSON file per host, engine,
// model and sweep (ROOT/.noise/KEY.json), and holds the newest DefaultKeep runs'
// observations: old enough runs stop counting, so a host whose noise
// changed (a new driver, a new neighbour) relearns it within a few nights.
package noise

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bakeoff-dev/bakeoff/results"
)

// Dir is the folder of the results root that holds the profiles.
const Dir = ".noise"

// DefaultKeep is how many of the newest runs a profile pools.
const DefaultKeep = 5

// Key names whose noise a profile is: a host, an engine and a model, under
// one sweep. The sweep is part of it because the noise of a level depends
// on what is sent there (4,000-token prompts vary otherwise than 200-token
// ones): two campaigns of one model on one host with other sweeps keep
// profiles of their own.
type Key struct {
	Host   string `json:"host"`
	Engine string `json:"engine"`
	Model  string `json:"model"`
	// Sweep is the sweep's fingerprint, shortened (sha256:0123456789ab).
	Sweep string `json:"sweep"`
}

// String is "HOST, ENGINE, MODEL, sweep FINGERPRINT" for the notes.
func (k Key) String() string {
	return fmt.Sprintf("%s, %s, %s, sweep %s", k.Host, k.Engine, k.Model, k.Sweep)
}

// unsafe is what a file name must not hold.
var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// file is the profile's file name: the key's parts with anything but
// letters, digits, dot, dash and underscore folded to one underscore.
func (k Key) file() string {
	part := func(s string) string { return strings.Trim(unsafe.ReplaceAllString(s, "_"), "_") }
	return part(k.Host) + "--" + part(k.Engine) + "--" + part(k.Model) + "--" + part(strings.TrimPrefix(k.Sweep, "sha256:")) + ".json"
}

// Observation is one run's measurement of the noise: the variance of one
// round's paired log difference about its level's mean, pooled over the
// run's variant-against-baseline comparisons and levels, with its degrees
// of freedom, and each level's standard deviation.
type Observation struct {
	// Run is the run's directory, relative to the results root
	// (CAMPAIGN/RUN).
	Run string `json:"run"`
	// At is when the run started.
	At time.Time `json:"at"`
	// Var is in (log units)²; DF its degrees of freedom.
	Var float64 `json:"round_var"`
	DF  float64 `json:"df"`
	// Levels are each level's own round standard deviation, percent, with
	// its degrees of freedom, for the report and forecasts.
	Levels []Level `json:"levels,omitempty"`
}

// Level is one level's round standard deviation in one run.
type Level struct {
	Level string  `json:"level"`
	SDPct float64 `json:"round_sd_pct"`
	DF    float64 `json:"df"`
}

// Profile is a key's observations, newest last.
type Profile struct {
	Key          Key           `json:"key"`
	Observations []Observation `json:"observations"`
}

// Pooled is the profile's variance pooled over its observations (weighted
// by their df), with the summed df and the runs it came from; ok is false
// when it has none with a variance.
func (p *Profile) Pooled() (v, df float64, runs []string, ok bool) {
	var ss float64
	for _, o := range p.Observations {
		if o.DF > 0 && o.Var > 0 {
			ss += o.Var * o.DF
			df += o.DF
			runs = append(runs, o.Run)
		}
	}
	if df <= 0 {
		return 0, 0, nil, false
	}
	return ss / df, df, runs, true
}

// Path is the file of key's profile under the results root.
func Path(root string, key Key) string {
	return filepath.Join(root, Dir, key.file())
}

// Load reads key's profile from the results root; nil, nil when there is
// none yet.
func Load(root string, key Key) (*Profile, error) {
	path := Path(root, key)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the noise profile: %w", err)
	}
	var p Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("reading the noise profile %s: %w", path, err)
	}
	return &p, nil
}

// Record adds a run's observation to key's profile (replacing an earlier
// one of the same run, as a resumed run measures again) and keeps the
// newest DefaultKeep, written atomically.
func Record(root string, key Key, o Observation) error {
	p, err := Load(root, key)
	if err != nil {
		return err
	}
	if p == nil {
		p = &Profile{Key: key}
	}
	p.Observations = slices.DeleteFunc(p.Observations, func(x Observation) bool { return x.Run == o.Run })
	p.Observations = append(p.Observations, o)
	slices.SortStableFunc(p.Observations, func(a, b Observation) int { return a.At.Compare(b.At) })
	if n := len(p.Observations); n > DefaultKeep {
		p.Observations = p.Observations[n-DefaultKeep:]
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("writing the noise profile: %w", err)
	}
	return results.WriteFileAtomic(Path(root, key), append(data, '\n'))
}
