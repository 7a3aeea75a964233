package pause

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFor: a wait ends with nil when its time is up, and with the
// context's error, well before its time, when the context ends.
func TestFor(t *testing.T) {
	if err := For(context.Background(), time.Millisecond); err != nil {
		t.Errorf("a finished wait: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() { done <- For(ctx, time.Hour) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a canceled wait: %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a canceled wait did not end")
	}
}
