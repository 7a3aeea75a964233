package remote

import "testing"

func TestLocalHost(t *testing.T) { hostSuite(t, NewLocal()) }
