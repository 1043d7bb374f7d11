// Package json holds the json.Decoder guest code gets in in-process yaegi: encoding/json's own,
// with its decodes followed by a fix of what they decoded (the zones of the times in it, see
// sandbox/yaegi/symbols/tz.go). It is a type of its own, not a rewrite of the calls, so that
// every way guest code can reach Decode goes through the fix: a call, a method value
// (f := dec.Decode), a method expression, an interface's method, a promoted method of a struct
// embedding the decoder. The package is named json so that guest code printing the type (%T)
// sees *json.Decoder, as it does natively.
package json

import (
	"encoding/json"
	"io"
)

// Decoder is encoding/json's Decoder with Decode followed by a fix of the decoded value.
type Decoder struct {
	d   *json.Decoder
	fix func(any)
}

// NewDecoder returns a decoder reading from r whose Decode calls fix on each value it decoded
// into (also when the decode failed part way: what it set before the error is the guest's).
func NewDecoder(r io.Reader, fix func(any)) *Decoder {
	return &Decoder{d: json.NewDecoder(r), fix: fix}
}

// Decode is json.Decoder.Decode followed by the fix.
func (dec *Decoder) Decode(v any) error {
	err := dec.d.Decode(v)
	dec.fix(v)
	return err
}

// Buffered is json.Decoder.Buffered.
func (dec *Decoder) Buffered() io.Reader { return dec.d.Buffered() }

// DisallowUnknownFields is json.Decoder.DisallowUnknownFields.
func (dec *Decoder) DisallowUnknownFields() { dec.d.DisallowUnknownFields() }

// InputOffset is json.Decoder.InputOffset.
func (dec *Decoder) InputOffset() int64 { return dec.d.InputOffset() }

// More is json.Decoder.More.
func (dec *Decoder) More() bool { return dec.d.More() }

// Token is json.Decoder.Token.
func (dec *Decoder) Token() (json.Token, error) { return dec.d.Token() }

// UseNumber is json.Decoder.UseNumber.
func (dec *Decoder) UseNumber() { dec.d.UseNumber() }
