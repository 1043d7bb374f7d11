package yaegi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/artifactforge/forge/sandbox"
	"github.com/artifactforge/forge/sandbox/yaegi/symbols"
)

// hostExports is forge/host as guest code sees it, bound to the slot's current call: the names of
// gate.HostAPI, the one list (TestHostExportsAreTheHostAPI). Every
// function goes through sandbox.Host, the one policy implementation both backends share:
//
//	host.Get(url string) (string, error)
//	host.Do(req host.Request) (host.Response, error)
//	host.Log(msg string); host.Logf(format string, args ...any)
//	host.Now() time.Time
//	host.Rand() float64; host.RandIntn(n int) int
//	host.Call(role, method string, args any) (string, error)        // JSON result text
//	host.CallInto(role, method string, args any, out any) error     // decoded into out
func hostExports(s *slot) map[string]reflect.Value {
	h := s.getHost
	call := func(role, method string, args any) (json.RawMessage, error) {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("host.Call %s.%s: encode args: %w", role, method, err)
		}
		return h().Call(role, method, b)
	}
	return map[string]reflect.Value{
		"Request":  reflect.ValueOf((*sandbox.HTTPRequest)(nil)),
		"Response": reflect.ValueOf((*sandbox.HTTPResponse)(nil)),
		"Get":      reflect.ValueOf(func(url string) (string, error) { return h().Get(url) }),
		"Do":       reflect.ValueOf(func(req sandbox.HTTPRequest) (sandbox.HTTPResponse, error) { return h().HTTP(req) }),
		"Log":      reflect.ValueOf(func(msg string) { _ = h().Log(msg) }),
		"Logf":     reflect.ValueOf(func(format string, args ...any) { _ = h().Log(fmt.Sprintf(format, args...)) }),
		"Now": reflect.ValueOf(func() time.Time {
			t, _ := h().Now()
			return t.UTC() // UTC, as the wasm backend gives it, not the host's zone
		}),
		"Rand": reflect.ValueOf(func() float64 {
			f, _ := h().Rand()
			return f
		}),
		"RandIntn": reflect.ValueOf(func(n int) int {
			i, err := h().RandIntn(n)
			if err != nil && n <= 0 {
				panic(err.Error())
			}
			return i
		}),
		"Call": reflect.ValueOf(func(role, method string, args any) (string, error) {
			b, err := call(role, method, args)
			return string(b), err
		}),
		"CallInto": reflect.ValueOf(func(role, method string, args any, out any) error {
			b, err := call(role, method, args)
			if err != nil {
				return err
			}
			err = json.Unmarshal(b, out)
			symbols.ZonesOf(out) // times decoded in the guest's zone, not the host's
			if err != nil {
				return fmt.Errorf("host.CallInto %s.%s: decode result: %w", role, method, err)
			}
			return nil
		}),
	}
}
