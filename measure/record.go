package measure

import "time"

// Error classes for Record.ErrClass. An empty class means the request succeeded.
const (
	ErrHTTP      = "http"      // non-2xx status
	ErrConnect   = "connect"   // refused, reset or unreachable before a response
	ErrCut       = "cut"       // stream ended mid-way (EOF or reset after headers)
	ErrNoDone    = "no_done"   // stream closed cleanly without `data: [DONE]`
	ErrMalformed = "malformed" // bad SSE framing or JSON
	ErrTimeout   = "timeout"   // per-request deadline exceeded
	ErrCanceled  = "canceled"  // the sweep was stopped (Ctrl-C) while it ran
	ErrEmpty     = "empty"     // finished without any generated token
	ErrServer    = "server"    // the stream carried an error object instead of a chunk
)

// Record is one request, written as one JSON line. Times are Unix nanoseconds
// so records from different machines sort and subtract without parsing.
//
// A field left out when zero (omitempty) is one of the client's own, where
// absent and zero mean the same. A count the server sends, where 0 is an
// answer of its own, is a pointer so that a 0 it sent is written and one it
// did not send is absent (CachedTokens, DraftTokens, DraftAccepted,
// VerifySteps).
// PromptTokens and Tokens are always written; TokensEstimated says when the
// server sent no usage.
type Record struct {
	// Level is the level: the target concurrency, or an open-loop level's
	// rate (written as one number, see level.go).
	Level     Level   `json:"level"`
	Rate      float64 `json:"rate,omitempty"`   // open-loop target arrival rate, requests per second
	Repeat    int     `json:"repeat"`           // 0-based repeat of the level
	Seq       int     `json:"seq"`              // 0-based index within the level repeat
	Warmup    bool    `json:"warmup,omitempty"` // warm-up requests are recorded but never measured
	Prompt    int     `json:"prompt"`           // index in the prompt set
	PromptSet string  `json:"prompt_set"`       // hash of the prompt set
	// Category is the prompt's category in its set; empty when it has none.
	Category string `json:"category,omitempty"`
	// Session names the multi-turn session the request is a turn of (the
	// X-Session-ID it was sent with), and Turn is that turn, from 1; both
	// absent for a request of no session. ThinkNs is the pause the user
	// took after the previous turn's answer before sending this one.
	Session string `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
	ThinkNs int64  `json:"think_ns,omitempty"`
	// MaxTokens is the max_tokens this request asked for when it was its
	// own (a recorded or synthetic output length); 0 when it was the
	// sweep's max_tokens.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Speed is a trace replay's level: the trace's pace times this.
	Speed float64 `json:"speed,omitempty"`
	// InputTokens is the prompt's length in tokens as the client knew it
	// exactly when it sent it: the token ids it sent, or the text's count
	// by the engine's tokenize call; 0 when it was only estimated from
	// words (the set's lengths are then marked estimated, InputLengths).
	InputTokens int   `json:"input_tokens,omitempty"`
	SendNs      int64 `json:"send_ns"`            // request written
	FirstNs     int64 `json:"first_ns,omitempty"` // first chunk with non-empty content
	EndNs       int64 `json:"end_ns"`             // stream finished or failed
	// ArrivalNs are the times, in ns after FirstNs, at which 1/8, 2/8, …,
	// 7/8 of the streamed content had arrived (ArrivalFractions), so that
	// throughput windows count the tokens produced inside them. Absent in
	// records from before it was kept, and for streams of one chunk: their
	// tokens are spread evenly from FirstNs to EndNs.
	ArrivalNs []int64 `json:"arrival_ns,omitempty"`
	// DispatchLagNs is the client's own delay between a slot freeing and this
	// request being sent: a self-audit of the load generator.
	DispatchLagNs int64 `json:"dispatch_lag_ns"`
	// LateNs is, for an open-loop request, how long after its scheduled
	// arrival the client sent it: the open loop's self-audit.
	LateNs int64 `json:"late_ns,omitempty"`
	// Capped is true when an open-loop request waited for a free place
	// under the client's in-flight cap, so it was sent late for a reason
	// of the client's own.
	Capped       bool `json:"capped,omitempty"`
	PromptTokens int  `json:"prompt_tokens"`
	Tokens       int  `json:"tokens"` // completion tokens, from the server's usage
	// TokensEstimated is true when the server sent no usage and Tokens was
	// estimated from the streamed content.
	TokensEstimated bool `json:"tokens_estimated,omitempty"`
	Chunks          int  `json:"chunks"` // content-bearing SSE events
	// MaxITLNs is the largest gap between content chunks divided by the tokens
	// that chunk carried.
	MaxITLNs int64 `json:"max_itl_ns,omitempty"`
	// ITL is every inter-token gap of the stream, compactly encoded (see
	// Gaps); absent in records from before it was kept, which then have no
	// ITL distribution, and for streams of one chunk.
	ITL    Gaps `json:"itl,omitempty"`
	Status int  `json:"status"` // HTTP status, 0 when none arrived
	// ConnRetries is 1 when the request was sent again, on a new
	// connection, because the server had closed the kept-alive connection it
	// first went out on before any byte of an answer arrived; SendNs is then
	// the second send's. Nothing else is ever sent again.
	ConnRetries  int    `json:"conn_retries,omitempty"`
	ErrClass     string `json:"err_class,omitempty"`
	Error        string `json:"error,omitempty"`
	OutputHash   string `json:"output_hash,omitempty"` // sha256 of the generated text, for greedy-equality checks
	FinishReason string `json:"finish_reason,omitempty"`
	// CachedTokens is the server's usage.prompt_tokens_details.cached_tokens:
	// prompt tokens served from its prefix cache instead of computed; nil
	// when the server does not report it.
	CachedTokens *int `json:"cached_tokens,omitempty"`
	// DraftTokens and DraftAccepted are the draft tokens proposed for this
	// request's speculative decoding and those the target accepted, as its
	// response said: llama.cpp's timings.draft_n and draft_n_accepted,
	// SGLang's spec_num_proposed_drafts and spec_num_correct_drafts, vLLM's
	// num_draft_tokens and num_accepted_draft_tokens. Pointers, because 0
	// is an answer: a random draft gets none accepted, and "accepted none"
	// (accept length 1.00) must not read as "not reported". nil when the
	// server did not send the field; Draft reads them.
	DraftTokens   *int `json:"draft_n,omitempty"`
	DraftAccepted *int `json:"draft_n_accepted,omitempty"`
	// VerifySteps is the target-model steps that verified this request's
	// drafts (SGLang's spec_verify_ct, vLLM's num_spec_steps), from which
	// its accept length is Tokens / VerifySteps, or 1 + DraftAccepted /
	// VerifySteps with DraftStepsOnly; nil when the response did not say
	// (llama.cpp's timings: Steps counts them from the drafts).
	VerifySteps *int `json:"verify_steps,omitempty"`
	// DraftStepsOnly is set when VerifySteps counts only the steps that
	// verified drafts (vLLM's num_spec_steps), not the first token's
	// prefill nor a decode step that drafted nothing: those steps produced
	// VerifySteps + DraftAccepted tokens, and the accept length is
	// 1 + DraftAccepted / VerifySteps, as vLLM defines it. Records written
	// before it was kept read as Tokens / VerifySteps.
	DraftStepsOnly bool `json:"draft_steps_only,omitempty"`
	// AcceptHistogram[j] is the number of this request's verify steps that
	// accepted exactly j draft tokens (SGLang's
	// spec_correct_drafts_histogram, vLLM's acceptance_histogram); nil when
	// the response had none.
	AcceptHistogram []int `json:"accept_histogram,omitempty"`
}

// Draft returns the request's draft counts; ok is false when the server
// reported no drafting (no draft_n). A draft_n without draft_n_accepted
// counts as none accepted: records written before zeros were kept left
// out an accepted count of 0, and llama.cpp sends the two together.
func (r Record) Draft() (drafted, accepted int, ok bool) {
	if r.DraftTokens == nil {
		return 0, 0, false
	}
	if r.DraftAccepted != nil {
		accepted = *r.DraftAccepted
	}
	return *r.DraftTokens, accepted, true
}

// OK reports whether the request succeeded.
func (r Record) OK() bool { return r.ErrClass == "" }

// TTFT is the time to first token, zero when no token arrived.
func (r Record) TTFT() time.Duration {
	if r.FirstNs == 0 {
		return 0
	}
	return time.Duration(r.FirstNs - r.SendNs)
}

// Latency is the end-to-end time of the request.
func (r Record) Latency() time.Duration { return time.Duration(r.EndNs - r.SendNs) }

// TPOT is the mean time per output token after the first:
// (latency − TTFT) / (tokens − 1); zero when fewer than two tokens.
func (r Record) TPOT() time.Duration {
	if r.Tokens < 2 || r.FirstNs == 0 {
		return 0
	}
	return time.Duration((r.EndNs - r.FirstNs) / int64(r.Tokens-1))
}
