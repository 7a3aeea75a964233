package orchestrator

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

func TestIsStorageFull(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"ENOSPC wrapped", fmt.Errorf("writing summary: %w", &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), true},
		{"quota", fmt.Errorf("x: %w", syscall.EDQUOT), true},
		{"read-only", fmt.Errorf("x: %w", syscall.EROFS), true},
		{"flattened into a reason", errors.New("downloading requests.jsonl: write /r/x: no space left on device"), true},
		{"a server failure", errors.New("server log shows Traceback"), false},
		{"permission", fmt.Errorf("x: %w", syscall.EACCES), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isStorageFull(tt.err); got != tt.want {
				t.Fatalf("isStorageFull(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
