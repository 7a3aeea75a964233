package campaign

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// echoEnv makes the test binary act as a stand-in engine: it prints its
// arguments and the variables named in echoVars as JSON and exits. Tests
// launch it through a real shell to see exactly what an engine receives.
const (
	echoEnv  = "BAKEOFF_CAMPAIGN_TEST_ECHO"
	echoVars = "BAKEOFF_CAMPAIGN_TEST_VARS"
)

// echoed is what the stand-in engine prints; []byte fields travel as
// base64, so bytes that are not UTF-8 survive the trip exactly.
type echoed struct {
	Args [][]byte          `json:"args"`
	Env  map[string][]byte `json:"env"`
}

func (e echoed) args() []string {
	out := make([]string, len(e.Args))
	for i, a := range e.Args {
		out[i] = string(a)
	}
	return out
}

func (e echoed) env() map[string]string {
	out := map[string]string{}
	for k, v := range e.Env {
		out[k] = string(v)
	}
	return out
}

func TestMain(m *testing.M) {
	if os.Getenv(echoEnv) == "1" {
		out := echoed{Env: map[string][]byte{}}
		for _, a := range os.Args[1:] {
			out.Args = append(out.Args, []byte(a))
		}
		for _, k := range strings.Split(os.Getenv(echoVars), ",") {
			if v, ok := os.LookupEnv(k); ok && k != "" {
				out.Env[k] = []byte(v)
			}
		}
		_ = json.NewEncoder(os.Stdout).Encode(out)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
