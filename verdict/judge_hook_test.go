package verdict_test

import (
	"github.com/bakeoff-dev/bakeoff/verdict"
	"github.com/bakeoff-dev/bakeoff/verdict/judge"
)

func init() { verdict.Judged = judge.Records }
