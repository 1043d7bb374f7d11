package guestgen

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/artifactforge/forge/sandbox"
)

// Host operations of forge/host (HostAPISource's op codes).
const (
	OpHTTP uint32 = iota + 1
	OpLog
	OpNow
	OpRand
	OpRandIntn
	OpCall
)

// callEnvelopeBytes is what a delegation request may carry besides its args (role, method, JSON).
const callEnvelopeBytes = 4 << 10

// RequestLimit is the largest request of op the host reads. Sizes are checked before anything is
// read: decoding a huge request would make the host hold (several times) what the memory cap
// allows the guest.
func RequestLimit(op uint32) uint32 {
	if op == OpCall {
		return sandbox.MaxCallArgsBytes + callEnvelopeBytes
	}
	return sandbox.MaxHostRequestBytes
}

// CheckRequestSize refuses a request of n bytes over RequestLimit(op).
func CheckRequestSize(op, n uint32) error {
	if limit := RequestLimit(op); n > limit {
		return fmt.Errorf("host request of %d bytes is over the %d-byte cap: send less per call", n, limit)
	}
	return nil
}

// ServeHostOp serves one host request of guest code with h, the capability policy of the call,
// and returns the value of the reply.
func ServeHostOp(h *sandbox.Host, op uint32, req []byte) (any, error) {
	switch op {
	case OpHTTP:
		var hr sandbox.HTTPRequest
		if err := json.Unmarshal(req, &hr); err != nil {
			return nil, err
		}
		resp, err := h.HTTP(hr)
		if resp.Status != 0 {
			return resp, err
		}
		return nil, err
	case OpLog:
		return nil, h.LogBytes(req)
	case OpNow:
		t, err := h.Now()
		if err != nil {
			return nil, err
		}
		return t.UnixNano(), nil
	case OpRand:
		return h.Rand()
	case OpRandIntn:
		var k int
		if err := json.Unmarshal(req, &k); err != nil {
			return nil, err
		}
		return h.RandIntn(k)
	case OpCall:
		var c struct {
			Role   string          `json:"role"`
			Method string          `json:"method"`
			Args   json.RawMessage `json:"args"`
		}
		if err := json.Unmarshal(req, &c); err != nil {
			return nil, err
		}
		v, err := h.Call(c.Role, c.Method, c.Args)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	return nil, errors.New("unknown host operation")
}

type hostReply struct {
	Value any    `json:"v,omitempty"`
	Err   string `json:"e,omitempty"`
}

// HostReply is the JSON reply forge/host's roundTrip reads.
func HostReply(value any, err error) []byte {
	r := hostReply{Value: value}
	if err != nil {
		r.Err = err.Error()
	}
	out, merr := json.Marshal(r)
	if merr != nil {
		out, _ = json.Marshal(hostReply{Err: "host: encode reply: " + merr.Error()})
	}
	return out
}
