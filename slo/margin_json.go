package slo

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// A margin is −Inf where a level missed its objective with nothing to show
// (no value measured, no request succeeded, a saturated open-loop level),
// and JSON has no infinities: encoding/json refuses the whole verdict.
// Margins are therefore written as numbers when finite and as the strings
// "-Inf" and "+Inf" otherwise, and read back either way.

// Margin is log(limit/value) for one bound (Result.Margin).
type Margin float64

// Margins are a level's margins by metric (Result.Margins).
type Margins map[string]float64

// MarshalJSON writes m as a number, or "-Inf" / "+Inf".
func (m Margin) MarshalJSON() ([]byte, error) { return marginJSON(float64(m)) }

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Margin) UnmarshalJSON(b []byte) error {
	x, err := parseMargin(b)
	*m = Margin(x)
	return err
}

// MarshalJSON writes every margin as Margin does, keys sorted.
func (ms Margins) MarshalJSON() ([]byte, error) {
	out := make(map[string]Margin, len(ms))
	for k, v := range ms {
		out[k] = Margin(v)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (ms *Margins) UnmarshalJSON(b []byte) error {
	var in map[string]Margin
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*ms = make(Margins, len(in))
	for k, v := range in {
		(*ms)[k] = float64(v)
	}
	return nil
}

func marginJSON(x float64) ([]byte, error) {
	switch {
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsNaN(x):
		return nil, fmt.Errorf("slo: a margin is NaN")
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

func parseMargin(b []byte) (float64, error) {
	switch string(b) {
	case `"-Inf"`:
		return math.Inf(-1), nil
	case `"+Inf"`:
		return math.Inf(1), nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return 0, fmt.Errorf("slo: reading a margin: %w", err)
	}
	return x, nil
}
