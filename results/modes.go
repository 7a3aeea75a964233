package results

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Who may read what bakeoff writes into a run directory. A run's records
// and its report are meant to be shared (a colleague reads index.html, a
// script reads requests.jsonl), so they are created as readable as the
// user's umask makes any new file: under umask 022 a run directory is
// 0755 and its report 0644, with no chmod needed to share it. The files
// that may hold secrets are user-only (0600) whatever the umask:
//
//   - manifest.json keeps the resolved campaign, and with it every value of
//     engine.env and the scenarios' env, where a token for a gated model
//     (HF_TOKEN) or an API key is usually written;
//   - result.json and summary.json keep each launch's command line, which
//     starts with that environment (`env -- K=V …`), and the server log's
//     last lines at a failure;
//   - server.log is the engine's own output, and engines print their
//     arguments at start (SGLang's server_args, vLLM's non-default args),
//     an --api-key among them;
//   - journal.jsonl keeps every failure's reason, lines of that log.
//
// bakeoff's own secrets (the API key the load generator sends, named by
// --api-key-env; SSH passphrases) are never written anywhere.
const (
	// FileMode and DirMode are the modes a shared result is created with,
	// before the umask takes its bits away.
	FileMode = 0o666
	DirMode  = 0o777
	// SecretFileMode is the mode of a file that may hold secrets (Secret).
	SecretFileMode = 0o600
)

// Secret reports whether a run directory's file called name (a base name)
// may hold secrets, and so stays user-only.
func Secret(name string) bool {
	switch name {
	case ManifestFile, SummaryFile, ResultFile, JournalFile, ServerLog:
		return true
	}
	return false
}

// ModeOf is the mode, before the umask, that a file at path is created
// with: SecretFileMode for a Secret name, FileMode otherwise.
func ModeOf(path string) fs.FileMode {
	if Secret(filepath.Base(path)) {
		return SecretFileMode
	}
	return FileMode
}

// SetMode gives a file that was copied into the run directory (a download
// keeps the mode its host gave it, user-only under the host's umask 077)
// the mode WriteAtomic would have created it with: user-only when Secret,
// else FileMode under this process's umask. Chmod ignores the umask, so the
// umask is read from a file created beside path.
func SetMode(path string) error {
	if Secret(filepath.Base(path)) {
		if err := os.Chmod(path, SecretFileMode); err != nil {
			return fmt.Errorf("making %s user-only: %w", path, err)
		}
		return nil
	}
	perm, err := umasked(filepath.Dir(path), FileMode)
	if err != nil {
		return fmt.Errorf("setting the mode of %s: %w", path, err)
	}
	if err := os.Chmod(path, perm); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", path, err)
	}
	return nil
}

// umasked is perm as the umask leaves it on a new file in dir. The umask
// can only be read by setting it (syscall.Umask), which would change it for
// every goroutine creating files meanwhile; creating a file shows it
// without that race.
func umasked(dir string, perm fs.FileMode) (fs.FileMode, error) {
	f, err := createTemp(dir, ".mode-probe-", perm)
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Mode().Perm(), nil
}

// createTemp is os.CreateTemp with the mode given, which the umask then
// reduces (os.CreateTemp always makes 0600).
func createTemp(dir, prefix string, perm fs.FileMode) (*os.File, error) {
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("creating a temporary file in %s: too many names taken", dir)
}
