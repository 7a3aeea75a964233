package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bakeoff-dev/bakeoff/verdict"
)

// TestTextHeaderKVOverTCP: a disaggregated scenario whose KV cache went over
// TCP is said in the report's header, once, above the notes that explain
// it; a run without such a note has no such line.
func TestTextHeaderKVOverTCP(t *testing.T) {
	v, _ := testVerdict(t)
	var plain bytes.Buffer
	if err := Text(&plain, v); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "kv transfer:") {
		t.Errorf("a run without the note says:\n%s", plain.String())
	}
	note := verdict.Note{Severity: verdict.SeverityWarn, Check: verdict.CheckKVTransfer, Scenario: "eagle3-topk4",
		Text: "no RDMA device on gpu-1: the KV cache of eagle3-topk4 went from prefill to decode over TCP"}
	v.Notes = append([]verdict.Note{note, note}, v.Notes...)
	var buf bytes.Buffer
	if err := Text(&buf, v); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(buf.String(), "\n\n")
	const want = "kv transfer: eagle3-topk4's KV cache went over TCP, not RDMA (the note below)"
	if strings.Count(header, want) != 1 {
		t.Errorf("the header does not say %q once:\n%s", want, header)
	}
	if !strings.Contains(buf.String(), note.Text) {
		t.Errorf("the note itself is not among the notes:\n%s", buf.String())
	}
}
