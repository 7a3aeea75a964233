package slo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// boundSuffix ends a bound's key in JSON, saying its unit: "ttft_p99_s".
const boundSuffix = "_s"

// MarshalJSON writes the objective as one object: each bound under its key
// and unit ("itl_p95_s": 0.2), in the order an objective lists them, and
// min_success when given. Manifests written before any percentile but p99
// had the same form.
func (s SLO) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	sep := ""
	write := func(k string, v float64) error {
		x, err := json.Marshal(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s%q:%s", sep, k, x)
		sep = ","
		return nil
	}
	for _, k := range sortedKeys(s.Bounds) {
		if err := write(k+boundSuffix, s.Bounds[k]); err != nil {
			return nil, err
		}
	}
	if s.MinSuccess > 0 {
		if err := write(MinSuccess, s.MinSuccess); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes; a key it does not know is an
// error, so that a bound is never silently dropped.
func (s *SLO) UnmarshalJSON(data []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("slo: %w", err)
	}
	*s = SLO{}
	for k, v := range m {
		if k == MinSuccess {
			s.MinSuccess = v
			continue
		}
		key, ok := strings.CutSuffix(k, boundSuffix)
		if !ok {
			return fmt.Errorf("slo: unknown key %q", k)
		}
		if _, _, err := ParseKey(key); err != nil {
			return fmt.Errorf("slo: %w", err)
		}
		if s.Bounds == nil {
			s.Bounds = map[string]float64{}
		}
		s.Bounds[key] = v
	}
	return nil
}
