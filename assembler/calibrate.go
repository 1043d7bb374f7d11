package assembler

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/gofrs/flock"

	"github.com/artifactforge/forge/internal/storepath"
)

// calibrationWeight is how much one observation moves a model's averages: recent calls count
// more, so a provider that changes its tokenizer is followed within a few dozen calls.
const calibrationWeight = 0.2

// Calibration is what a Calibrator knows of one model: exponentially weighted averages of the
// characters sent and the input tokens the provider reported for them.
type Calibration struct {
	Chars   float64 `json:"chars"`
	Tokens  float64 `json:"tokens"`
	Samples int     `json:"samples"`
}

// Divisor is the model's characters per token, DefaultDivisor before any observation.
func (c Calibration) Divisor() float64 {
	if c.Samples == 0 || c.Tokens <= 0 || c.Chars <= 0 {
		return DefaultDivisor
	}
	return c.Chars / c.Tokens
}

// Calibrator learns each model's characters-per-token divisor from the provider's reported
// input tokens and persists it (one JSON file, written atomically under a cross-process lock and
// merged with other processes' observations on Save). It is safe for concurrent use.
type Calibrator struct {
	path string
	mu   sync.Mutex
	m    map[string]Calibration
	new  map[string][]obs // observed since the last Save
}

type obs struct{ chars, tokens int }

// OpenCalibrator reads path (absent: nothing calibrated yet). A file that does not parse, or is
// not a regular file, is ignored and replaced on the next Save: calibration is a cache, rebuilt by later calls.
func OpenCalibrator(path string) (*Calibrator, error) {
	c := &Calibrator{path: path, m: map[string]Calibration{}, new: map[string][]obs{}}
	b, err := storepath.ReadRegular(path, "read token calibration")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, storepath.ErrNotRegular) {
		return c, nil // not a file forge wrote (a planted pipe): ignored like one that does not parse
	}
	if err != nil {
		return nil, fmt.Errorf("assembler: read %s: %w", path, err)
	}
	_ = json.Unmarshal(b, &c.m)
	return c, nil
}

// Divisor is model's current divisor.
func (c *Calibrator) Divisor(model string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[model].Divisor()
}

// Calibration returns what is known of model.
func (c *Calibrator) Calibration(model string) Calibration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[model]
}

// Observe records that a prompt of chars characters was reported as tokens input tokens.
func (c *Calibrator) Observe(model string, chars, tokens int) {
	if model == "" || chars <= 0 || tokens <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[model] = observe(c.m[model], chars, tokens)
	c.new[model] = append(c.new[model], obs{chars, tokens})
}

func observe(cal Calibration, chars, tokens int) Calibration {
	if cal.Samples == 0 {
		return Calibration{Chars: float64(chars), Tokens: float64(tokens), Samples: 1}
	}
	cal.Chars += calibrationWeight * (float64(chars) - cal.Chars)
	cal.Tokens += calibrationWeight * (float64(tokens) - cal.Tokens)
	cal.Samples++
	return cal
}

// Save merges this process's observations into the file.
func (c *Calibrator) Save() error {
	c.mu.Lock()
	pending := c.new
	c.new = map[string][]obs{}
	c.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	// cache/tokens.json and its lock are the store's: no link below the store is followed.
	root := filepath.Dir(filepath.Dir(c.path))
	if err := storepath.MkdirAll(root, filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("assembler: %w", err)
	}
	for _, p := range []string{c.path, c.path + ".lock"} {
		if err := storepath.Check(root, p, "write token calibration"); err != nil {
			return fmt.Errorf("assembler: %w", err)
		}
	}
	l := flock.New(c.path + ".lock")
	if err := l.Lock(); err != nil {
		return fmt.Errorf("assembler: lock %s: %w", l.Path(), err)
	}
	defer l.Close()
	disk := map[string]Calibration{}
	if b, err := storepath.ReadRegular(c.path, "read token calibration"); err == nil {
		_ = json.Unmarshal(b, &disk)
	}
	for model, list := range pending {
		cal := disk[model]
		for _, o := range list {
			cal = observe(cal, o.chars, o.tokens)
		}
		disk[model] = cal
	}
	b, err := json.MarshalIndent(disk, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(c.path, append(b, '\n')); err != nil {
		return fmt.Errorf("assembler: write %s: %w (calibration is kept in memory)", c.path, err)
	}
	c.mu.Lock()
	for model, cal := range disk {
		if len(c.new[model]) == 0 {
			c.m[model] = cal
		}
	}
	c.mu.Unlock()
	return nil
}

// writeFileAtomic is the store's write rule: temp file in the same directory, fsync, rename,
// directory fsync.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
