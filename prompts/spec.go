package prompts

import (
	"errors"
	"fmt"
	"os"
)

// Spec is everything that makes a sweep's prompt set: where the prompts
// come from and how each request's max_tokens is chosen.
type Spec struct {
	// File is Builtin (or empty) or the path of a JSONL file.
	File string
	// OutputLengths is OutputMaxTokens (or empty) or OutputRecorded.
	OutputLengths string
	// Synthetic, when set, makes a synthetic set instead; File must then be
	// the built-in set and OutputLengths empty (a synthetic set always asks
	// for its drawn output lengths).
	Synthetic *SyntheticSpec
}

// Check reports what is wrong with the spec's combination of fields.
func (sp Spec) Check() error {
	switch sp.OutputLengths {
	case "", OutputMaxTokens, OutputRecorded:
	default:
		return fmt.Errorf("output lengths %q: want %s or %s", sp.OutputLengths, OutputMaxTokens, OutputRecorded)
	}
	if sp.Synthetic == nil {
		return nil
	}
	if sp.File != "" && sp.File != Builtin {
		return errors.New("a synthetic set is cut from the built-in text; it takes no file")
	}
	if sp.OutputLengths != "" {
		return errors.New("a synthetic set always asks for its drawn output lengths; it takes no output_lengths")
	}
	return sp.Synthetic.Check()
}

// Make builds the set the spec describes; seed makes a synthetic set (the
// sweep's seed). read reads a file (os.ReadFile when nil); File is used as
// given, so resolve it against the config's folder first.
func Make(sp Spec, seed int64, read func(string) ([]byte, error)) (*Set, error) {
	if err := sp.Check(); err != nil {
		return nil, err
	}
	if sp.Synthetic != nil {
		return Synthesize(*sp.Synthetic, seed)
	}
	var set *Set
	var err error
	if sp.File == "" || sp.File == Builtin {
		set, err = Parse(Builtin, builtinJSONL)
	} else {
		if read == nil {
			read = os.ReadFile
		}
		var data []byte
		if data, err = read(sp.File); err != nil {
			return nil, fmt.Errorf("reading prompts: %w", err)
		}
		set, err = Parse(sp.File, data)
	}
	if err != nil {
		return nil, err
	}
	if sp.OutputLengths == OutputRecorded {
		set = set.WithRecordedLengths()
	}
	return set, nil
}
