package forge

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/artifactforge/forge/sandbox"
)

// warmSandbox is a backend that needs a warm-up (or not) and counts them.
type warmSandbox struct {
	sandbox.Sandbox
	needs bool
	warms int
	err   error
}

func (s *warmSandbox) NeedsWarm() bool { return s.needs }
func (s *warmSandbox) Warm(context.Context) error {
	s.warms++
	s.needs = false
	return s.err
}

func (s *warmSandbox) Close() error { return nil }

// plainSandbox is a backend with nothing to warm.
type plainSandbox struct{ sandbox.Sandbox }

func (plainSandbox) Close() error { return nil }

// TestWarmUp: the default backend is warmed only if it says it needs it, with started called
// before; a backend with nothing to warm, or already warm, costs nothing; a failed warm-up says why.
func TestWarmUp(t *testing.T) {
	boom := errors.New("no wasip1 toolchain")
	for _, tc := range []struct {
		name       string
		sb         sandbox.Sandbox
		warmed     bool
		wantWarms  int
		wantErr    error
		wantCalled bool
	}{
		{"needs it", &warmSandbox{needs: true}, true, 1, nil, true},
		{"already warm", &warmSandbox{}, false, 0, nil, false},
		{"not a warmer", plainSandbox{}, false, 0, nil, false},
		{"fails", &warmSandbox{needs: true, err: boom}, true, 1, boom, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Open(Options{Store: t.TempDir(), DefaultSandbox: "yaegi",
				Sandboxes: func(string) (sandbox.Sandbox, error) { return tc.sb, nil }})
			require.NoError(t, err)
			defer f.Close()
			called := false
			warmed, _, err := f.WarmUp(context.Background(), func() { called = true })
			assert.Equal(t, tc.warmed, warmed)
			assert.Equal(t, tc.wantCalled, called)
			assert.ErrorIs(t, err, tc.wantErr)
			if tc.wantErr == nil {
				assert.NoError(t, err)
			}
			if w, ok := tc.sb.(*warmSandbox); ok {
				assert.Equal(t, tc.wantWarms, w.warms)
				warmed, _, _ = f.WarmUp(context.Background(), nil)
				assert.False(t, warmed, "a second warm-up has nothing to do")
			}
		})
	}
}

// TestBackgroundWarmUp: a command warms the default backend in the background only if that
// backend registers a machine warm-up, says it is needed, and the operator did not turn it off;
// $FORGE_SANDBOX picks the backend as it does for calls.
func TestBackgroundWarmUp(t *testing.T) {
	warm := func() error { return nil }
	wasm := func(needs bool) sandbox.Backend {
		return sandbox.Backend{Name: "wasm", Contains: true, NeedsWarm: func() bool { return needs },
			Warm: func(context.Context) error { return warm() }}
	}
	yaegi := sandbox.Backend{Name: "yaegi", ContainsIsolated: sandbox.IsolationProcess}
	noTool := wasm(true)
	noTool.Available = func() error { return errors.New("no toolchain") }
	for _, tc := range []struct {
		name, operator, setting string
		backends                []sandbox.Backend
		want                    string
	}{
		{"a cold machine warms its default", "", "", []sandbox.Backend{wasm(true), yaegi}, "wasm"},
		{"a warm machine does not", "", "", []sandbox.Backend{wasm(false), yaegi}, ""},
		{"turned off", "", "off", []sandbox.Backend{wasm(true), yaegi}, ""},
		{"turned off: OFF", "", "OFF", []sandbox.Backend{wasm(true), yaegi}, ""},
		{"turned off: 0", "", "0", []sandbox.Backend{wasm(true), yaegi}, ""},
		{"turned off: false", "", " false ", []sandbox.Backend{wasm(true), yaegi}, ""},
		{"a misspelling is off, not on", "", "of", []sandbox.Backend{wasm(true), yaegi}, ""},
		{"on", "", "On", []sandbox.Backend{wasm(true), yaegi}, "wasm"},
		{"1", "", "1", []sandbox.Backend{wasm(true), yaegi}, "wasm"},
		{"another default", "yaegi", "", []sandbox.Backend{wasm(true), yaegi}, ""},
		{"the operator names it", "wasm", "", []sandbox.Backend{yaegi, wasm(true)}, "wasm"},
		{"an unknown default", "lua", "", []sandbox.Backend{wasm(true), yaegi}, ""},
		{"no toolchain: the default is not wasm", "", "", []sandbox.Backend{noTool, yaegi}, ""},
		{"a backend without a machine warm-up", "", "", []sandbox.Backend{{Name: "wasm", Contains: true}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ok := BackgroundWarmUp(tc.operator, tc.setting, tc.backends)
			assert.Equal(t, tc.want != "", ok)
			if ok {
				assert.Equal(t, tc.want, b.Name)
			}
		})
	}
}
