package sglog

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Logger writes SGLang-style log lines: "[2006-01-02 15:04:05] msg", or with
// a tensor-parallel rank "[2006-01-02 15:04:05 TP0] msg". The log is the
// sim's product (the orchestrator scans it for failure signatures), so it is
// written to the writer cmd hands in.
type Logger struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// NewLogger returns a logger writing to w with timestamps from now.
func NewLogger(w io.Writer, now func() time.Time) *Logger {
	if now == nil {
		now = time.Now
	}
	return &Logger{w: w, now: now}
}

const TimeFormat = "2006-01-02 15:04:05"

// Printf logs one line from the server process.
func (l *Logger) Printf(format string, a ...any) {
	l.write(fmt.Sprintf("[%s] ", l.now().Format(TimeFormat)) + fmt.Sprintf(format, a...) + "\n")
}

// Rankf logs one line from tensor-parallel rank tp.
func (l *Logger) Rankf(tp int, format string, a ...any) {
	l.write(fmt.Sprintf("[%s TP%d] ", l.now().Format(TimeFormat), tp) + fmt.Sprintf(format, a...) + "\n")
}

// Raw writes text as is (uvicorn lines, tracebacks); each line ends in "\n".
func (l *Logger) Raw(text string) {
	if len(text) > 0 && text[len(text)-1] != '\n' {
		text += "\n"
	}
	l.write(text)
}

func (l *Logger) write(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, s)
}
