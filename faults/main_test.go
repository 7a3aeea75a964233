package faults

import (
	"os"
	"testing"

	"github.com/bakeoff-dev/bakeoff/internal/testbin"
)

// bakeoffBin is the binary under test, built once by TestMain exactly as
// `make build` builds it (static, so it can run on a namespace host too).
var bakeoffBin string

func TestMain(m *testing.M) {
	os.Exit(testbin.Main(m, "faults", &bakeoffBin, true))
}
