package slurm

import (
	"reflect"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "90", want: 90 * time.Minute},
		{in: "5:30", want: 5*time.Minute + 30*time.Second},
		{in: "12:00:00", want: 12 * time.Hour},
		{in: "1-0", want: 24 * time.Hour},
		{in: "2-03:04", want: 51*time.Hour + 4*time.Minute},
		{in: "1-23:59:51", want: 47*time.Hour + 59*time.Minute + 51*time.Second},
		{in: "0:00", want: 0},
		{in: "", bad: true},
		{in: "12h", bad: true},
		{in: "1:2:3:4", bad: true},
		{in: "1-", bad: true},
		{in: "x-1", bad: true},
		{in: "1:60", bad: true},
		{in: "1:60:00", bad: true},
		{in: "1-24", bad: true},
		{in: "-5", bad: true},
		{in: "1::2", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("ParseTime(%q) = %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatTime(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{time.Minute, "00:01:00"},
		{12 * time.Hour, "12:00:00"},
		{49*time.Hour + 30*time.Second, "2-01:00:30"},
		{-time.Second, "00:00:00"},
	}
	for _, tt := range tests {
		if got := FormatTime(tt.in); got != tt.want {
			t.Errorf("FormatTime(%v) = %q, want %q", tt.in, got, tt.want)
		}
		if back, err := ParseTime(FormatTime(tt.in)); err != nil || (tt.in > 0 && back != tt.in) {
			t.Errorf("ParseTime(FormatTime(%v)) = %v, %v", tt.in, back, err)
		}
	}
}

func TestParseSqueue(t *testing.T) {
	asked := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	out := "12|PENDING|Resources|12:00:00||bakeoff-a\n" +
		"13|RUNNING|None|1-02:03:04|gpu[01-02]|bakeoff-b|odd\n" +
		"14|CANCELLED by 0|None|UNLIMITED|gpu03|x\n\n"
	got, err := parseSqueue(out, asked)
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: "12", State: StatePending, Reason: "Resources", Name: "bakeoff-a"},
		{ID: "13", State: StateRunning, Reason: "None", Name: "bakeoff-b|odd", Nodes: []string{"gpu[01-02]"},
			End: asked.Add(26*time.Hour + 3*time.Minute + 4*time.Second)},
		{ID: "14", State: StateCancelled, Reason: "None", Name: "x", Nodes: []string{"gpu03"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseSqueue:\n got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{"12|PENDING", "x|RUNNING|None|1:00|n|j", "1|RUNNING|None|soon|n|j"} {
		if _, err := parseSqueue(bad, asked); err == nil {
			t.Errorf("parseSqueue(%q): no error", bad)
		}
	}
}

func TestJobStates(t *testing.T) {
	for state, live := range map[string]bool{StatePending: true, StateRunning: true, StateConfiguring: true,
		StateCancelled: false, StateTimeout: false, "COMPLETED": false, "FAILED": false, "NODE_FAIL": false} {
		j := Job{State: state}
		if j.Live() != live {
			t.Errorf("%s: Live() = %v, want %v", state, j.Live(), live)
		}
	}
}

func TestRequestArgs(t *testing.T) {
	r := Request{Name: "bakeoff-x", Partition: "gpu", Account: "lab", Gres: "gpu:8", Nodes: 2, Time: 12 * time.Hour, NoKill: true}
	want := []string{"--job-name=bakeoff-x", "--nodes=2", "--time=12:00:00", "--partition=gpu", "--account=lab", "--gres=gpu:8", "--no-kill"}
	if got := r.args(); !reflect.DeepEqual(got, want) {
		t.Errorf("args = %q, want %q", got, want)
	}
	if got := quote("a b'c"); got != `'a b'\''c'` {
		t.Errorf("quote = %s", got)
	}
	if got := quote("gpu[01-02]"); got != "'gpu[01-02]'" {
		t.Errorf("quote = %s: a bracket must not reach the shell bare", got)
	}
}

func TestParseNodeAddrs(t *testing.T) {
	got, err := parseNodeAddrs("gpu01|10.0.0.1\ngpu01|10.0.0.1\ngpu02|gpu02\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"gpu01": "10.0.0.1", "gpu02": "gpu02"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseNodeAddrs("gpu01\n"); err == nil {
		t.Error("a line without an address: no error")
	}
}
