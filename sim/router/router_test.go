package router

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestParseRouterArgs: the router's command line, and its refusals in
// argparse's words.
func TestParseRouterArgs(t *testing.T) {
	c, err := ParseArgs(strings.Fields("--pd-disaggregation --prefill http://p1:30000 8998 --prefill http://p2:30000 none --decode http://d1:30001 --decode http://d2:30001 --port 8000 --policy round_robin --prometheus-port 29000"))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Host: DefaultHost, Port: 8000, PD: true, Policy: "round_robin",
		Prefill: []Prefill{{"http://p1:30000", 8998}, {"http://p2:30000", 0}}, Decode: []string{"http://d1:30001", "http://d2:30001"}}
	if fmt.Sprint(*c) != fmt.Sprint(want) {
		t.Errorf("parsed %+v, want %+v", *c, want)
	}
	for _, tc := range []struct{ args, msg string }{
		{"--pd-disaggregation --prefill http://p:1", "PD disaggregation mode requires --prefill and --decode URLs"},
		{"--prefill http://p:1 --decode http://d:1", "--prefill and --decode need --pd-disaggregation"},
		{"--pd-disaggregation --prefill http://p:1 port --decode http://d:1", "argument --prefill: invalid bootstrap port: 'port'"},
		{"--worker-urls http://w:1 --policy fastest", "argument --policy: invalid choice: 'fastest'"},
		{"--worker-urls http://w:1 --frobnicate", "unrecognized arguments: --frobnicate"},
		{"--worker-urls w:1", "invalid worker URL: 'w:1'"},
		{"", "no workers"},
	} {
		_, err := ParseArgs(strings.Fields(tc.args))
		var re *routerError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), routerProg+": error: "+tc.msg) {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.msg)
		}
	}
}
