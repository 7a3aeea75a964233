package measure

// How a sweep's prompt lengths in tokens were made (LevelSummary.InputLengths).
const (
	// LengthsExact: every prompt is exactly its length in the served
	// model's tokens: sent as token ids, or text cut by the engine's
	// tokenize call until its count matched.
	LengthsExact = "exact"
	// LengthsTokenized: text counted by the engine's tokenize call, which
	// could not always be cut to the length asked (records' input_tokens
	// say what each prompt was).
	LengthsTokenized = "tokenized"
	// LengthsEstimated: text of words × 4/3 tokens (prompts.TokensPerWord),
	// the fallback for an engine without a tokenize call.
	LengthsEstimated = "estimated (4/3 tokens per word)"
)
