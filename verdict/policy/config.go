package policy

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Config is a scenario as the run's manifest recorded it (the resolved
// campaign's campaign.Scenario, read back from JSON): what a setting is
// written from.
type Config struct {
	Name   string
	Engine string
	Model  string
	Args   []Arg
	Env    map[string]string
	// Launch and Deployment are set when the scenario replaces the launch
	// command or runs several processes: no setting is written over those.
	Launch     []string
	Deployment json.RawMessage
	GPUCount   int
	File       string
}

// Arg is one engine flag as campaign.Arg records it: no values for a bare
// boolean flag, several for a repeated one.
type Arg struct {
	Key    string
	Values []string
	Bare   bool
}

// Configs reads the scenarios of the campaign a manifest recorded as
// resolved (results.Manifest.Resolved), by name; empty when it recorded
// none or cannot be read.
func Configs(resolved any) map[string]Config {
	out := map[string]Config{}
	if resolved == nil {
		return out
	}
	data, err := json.Marshal(resolved)
	if err != nil {
		return out
	}
	var c struct{ Scenarios []Config }
	if json.Unmarshal(data, &c) != nil {
		return out
	}
	for _, s := range c.Scenarios {
		out[s.Name] = s
	}
	return out
}

// arg is the flag's value ("" for a bare flag) and whether it is set.
func (c Config) arg(key string) (string, bool) {
	for _, a := range c.Args {
		if a.Key == key {
			if len(a.Values) == 0 {
				return "", true
			}
			return a.Values[len(a.Values)-1], true
		}
	}
	return "", false
}

// without is the config's args but those drop names.
func (c Config) without(drop func(key string) bool) []Arg { return argsWithout(c.Args, drop) }

// argsWithout is args but those drop names.
func argsWithout(args []Arg, drop func(key string) bool) []Arg {
	var out []Arg
	for _, a := range args {
		if !drop(a.Key) {
			out = append(out, a)
		}
	}
	return out
}

// sameArgs reports whether two arg lists set the same flags to the same
// values, in any order.
func sameArgs(a, b []Arg) bool {
	if len(a) != len(b) {
		return false
	}
	byKey := func(x, y Arg) int { return strings.Compare(x.Key, y.Key) }
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, byKey)
	slices.SortFunc(b, byKey)
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Bare != b[i].Bare || !slices.Equal(a[i].Values, b[i].Values) {
			return false
		}
	}
	return true
}

// argDiff names the first flag that differs between two arg lists.
func argDiff(a, b []Arg) string {
	in := func(list []Arg, k string) (Arg, bool) {
		for _, x := range list {
			if x.Key == k {
				return x, true
			}
		}
		return Arg{}, false
	}
	for _, list := range [][]Arg{a, b} {
		for _, x := range list {
			ya, oka := in(a, x.Key)
			yb, okb := in(b, x.Key)
			if oka != okb || ya.Bare != yb.Bare || !slices.Equal(ya.Values, yb.Values) {
				return "--" + x.Key
			}
		}
	}
	return ""
}

func sameEnv(a, b map[string]string) bool { return maps.Equal(a, b) }
