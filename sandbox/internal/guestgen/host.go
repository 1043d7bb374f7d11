package guestgen

// HostAPISource is forge/host's API file inside a guest module: the same surface as the yaegi
// backend's, each function a JSON request that the package's exchange function (the backend's
// transport file, e.g. WasmTransportSource) carries to the host, which serves it with
// sandbox.Host through ServeHostOp (one implementation of the policy, every transport).
const HostAPISource = `// Package host is the forge host API as guest code sees it.
package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Request is an HTTP request made through the host.
type Request struct {
	Method string            ` + "`json:\"method\"`" + `
	URL    string            ` + "`json:\"url\"`" + `
	Header map[string]string ` + "`json:\"header,omitempty\"`" + `
	Body   string            ` + "`json:\"body,omitempty\"`" + `
}

// Response is what the host returns for an HTTP request.
type Response struct {
	Status int               ` + "`json:\"status\"`" + `
	Header map[string]string ` + "`json:\"header,omitempty\"`" + `
	Body   string            ` + "`json:\"body\"`" + `
}

const (
	opHTTP uint32 = iota + 1
	opLog
	opNow
	opRand
	opRandIntn
	opCall
)

type reply struct {
	Value json.RawMessage ` + "`json:\"v\"`" + `
	Err   string          ` + "`json:\"e\"`" + `
}

func roundTrip(op uint32, req []byte) (json.RawMessage, error) {
	buf := exchange(op, req)
	var r reply
	if err := json.Unmarshal(buf, &r); err != nil {
		return nil, fmt.Errorf("host: bad reply: %w", err)
	}
	if r.Err != "" {
		return r.Value, errors.New(r.Err)
	}
	return r.Value, nil
}

// Do performs req if the role may reach its host.
func Do(req Request) (Response, error) {
	b, _ := json.Marshal(req)
	v, err := roundTrip(opHTTP, b)
	var resp Response
	if len(v) > 0 {
		_ = json.Unmarshal(v, &resp)
	}
	return resp, err
}

// Get fetches url and returns its body.
func Get(url string) (string, error) {
	resp, err := Do(Request{Method: "GET", URL: url})
	return resp.Body, err
}

// Log records a log line.
func Log(msg string) { _, _ = roundTrip(opLog, []byte(msg)) }

// Logf records a formatted log line.
func Logf(format string, args ...any) { Log(fmt.Sprintf(format, args...)) }

// Now returns the wall clock.
func Now() time.Time {
	v, err := roundTrip(opNow, nil)
	if err != nil {
		return time.Time{}
	}
	var ns int64
	_ = json.Unmarshal(v, &ns)
	return time.Unix(0, ns).UTC()
}

// Rand returns a pseudo-random float64 in [0, 1).
func Rand() float64 {
	v, _ := roundTrip(opRand, nil)
	var f float64
	_ = json.Unmarshal(v, &f)
	return f
}

// RandIntn returns a pseudo-random int in [0, n).
func RandIntn(n int) int {
	b, _ := json.Marshal(n)
	v, err := roundTrip(opRandIntn, b)
	if err != nil && n <= 0 {
		panic(err.Error())
	}
	var i int
	_ = json.Unmarshal(v, &i)
	return i
}

type callReq struct {
	Role   string          ` + "`json:\"role\"`" + `
	Method string          ` + "`json:\"method\"`" + `
	Args   json.RawMessage ` + "`json:\"args\"`" + `
}

func call(role, method string, args any) (json.RawMessage, error) {
	a, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("host.Call %s.%s: encode args: %w", role, method, err)
	}
	b, _ := json.Marshal(callReq{Role: role, Method: method, Args: a})
	return roundTrip(opCall, b)
}

// Call delegates role.method to the forge and returns its JSON result text.
func Call(role, method string, args any) (string, error) {
	v, err := call(role, method, args)
	return string(v), err
}

// CallInto delegates role.method and decodes its result into out.
func CallInto(role, method string, args any, out any) error {
	v, err := call(role, method, args)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(v, out); err != nil {
		return fmt.Errorf("host.CallInto %s.%s: decode result: %w", role, method, err)
	}
	return nil
}
`

// WasmTransportSource is forge/host's transport in a wasm guest: the request is read from guest
// memory by the host's forge.host import, and the reply copied in by forge.take.
const WasmTransportSource = `package host

import "unsafe"

//go:wasmimport forge host
func hostCall(op uint32, ptr unsafe.Pointer, n uint32) uint32

//go:wasmimport forge take
func hostTake(ptr unsafe.Pointer)

func exchange(op uint32, req []byte) []byte {
	var p unsafe.Pointer
	if len(req) > 0 {
		p = unsafe.Pointer(&req[0])
	}
	n := hostCall(op, p, uint32(len(req)))
	buf := make([]byte, n)
	if n > 0 {
		hostTake(unsafe.Pointer(&buf[0]))
	}
	return buf
}
`
