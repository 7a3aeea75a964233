package campaign

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/bakeoff-dev/bakeoff/measure"
	"github.com/bakeoff-dev/bakeoff/prompts"
)

// fingerprintVersion names the canonical form below; change it whenever the
// form changes, so old and new fingerprints can never collide. v1 held the
// request count of every level; v2 leaves it out (LegacyFingerprint).
const (
	fingerprintVersion       = "bakeoff-sweep-v2"
	legacyFingerprintVersion = "bakeoff-sweep-v1"
)

// Fingerprint is a stable "sha256:<hex>" of everything that must be
// identical for two scenarios' results to be comparable: the levels in
// order, max_tokens, warmup, temperature, ignore_eos, endpoint, repeats,
// seed, the prompt set's content hash (which covers each prompt's category
// and own max_tokens), unique_prompts when it is on, output_lengths when it
// is recorded, a synthetic set's canonical spec, and the sessions' canonical
// spec (each written only when
// set, so a fingerprint from before the option existed still matches its
// campaign). A trace replay writes its mode, its speeds as the levels, the
// trace's content hash, the block size and the blocks' generator (the token
// content is a function of these). An open-loop sweep writes its mode, its rates as the levels and
// its burstiness (only then, for the same reason): the arrival schedule is a
// function of these and the seed. The canonical text is built field by field
// with fixed formatting (integers in decimal, the temperature as the
// shortest decimal that round-trips), so it depends on neither map order nor
// the machine.
//
// How many requests a level takes is not in it: requests change how
// precisely a launch is measured, not what is measured (the per-launch
// throughput is tokens over the steady window, whatever its length), and a
// planned campaign changes them between rounds. The count is recorded
// beside the fingerprint (the manifest's sweep, and the records themselves).
// Nor are the percentiles the latencies are reported at (percentiles): they
// choose how the records are read, and a run can be read at others later.
func Fingerprint(s Sweep, promptSetHash string) string {
	return fingerprint(s, promptSetHash, false)
}

// LegacyFingerprint is the fingerprint as runs written before the request
// count left it recorded them (bakeoff-sweep-v1: the resolved request count
// of every level included), so that such a run still matches its campaign
// when resumed.
func LegacyFingerprint(s Sweep, promptSetHash string) string {
	return fingerprint(s, promptSetHash, true)
}

func fingerprint(s Sweep, promptSetHash string, legacy bool) string {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, v) }
	if legacy {
		line("version", legacyFingerprintVersion)
	} else {
		line("version", fingerprintVersion)
	}
	keys := s.Levels()
	levels := make([]string, len(keys))
	reqs := make([]string, len(keys))
	for i, c := range keys {
		levels[i] = strconv.Itoa(c.Concurrency)
		if len(s.Rates) > 0 {
			levels[i] = measure.FormatRate(s.Rates[i])
		}
		if len(s.Speeds) > 0 {
			levels[i] = measure.FormatRate(s.Speeds[i])
		}
		reqs[i] = strconv.Itoa(s.RequestsAt(c))
	}
	if len(s.Rates) > 0 {
		line("mode", ModeRate)
		line("burstiness", strconv.FormatFloat(s.ArrivalShape(), 'g', -1, 64))
	}
	if len(s.Speeds) > 0 {
		// What a replay sends is a function of the trace's rows, the block
		// size and the way blocks are made from hash ids (prompts.Blocks):
		// the three together cover the token content.
		line("mode", ModeTrace)
		line("trace", s.TraceHash)
		line("block_size", strconv.Itoa(s.BlockSize))
		line("blocks", prompts.Blocks)
	}
	line("levels", strings.Join(levels, ","))
	if legacy {
		line("requests", strings.Join(reqs, ","))
	}
	line("max_tokens", strconv.Itoa(s.MaxTokens))
	line("warmup", strconv.Itoa(s.Warmup))
	temp := s.Temperature
	if temp == 0 {
		temp = 0 // -0 and 0 sample alike
	}
	line("temperature", strconv.FormatFloat(temp, 'g', -1, 64))
	line("ignore_eos", strconv.FormatBool(s.IgnoreEOS))
	endpoint := s.Endpoint
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	line("endpoint", endpoint)
	repeats := max(s.Repeats, 1)
	line("repeats", strconv.Itoa(repeats))
	line("seed", strconv.FormatInt(s.Seed, 10))
	line("prompts", promptSetHash)
	if s.UniquePrompts {
		line("unique_prompts", "true")
	}
	if s.OutputLengths == prompts.OutputRecorded {
		line("output_lengths", prompts.OutputRecorded)
	}
	if s.Synthetic != nil {
		line("synthetic", s.Synthetic.String())
	}
	if s.Sessions != nil {
		line("sessions", s.Sessions.String())
	}
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}
