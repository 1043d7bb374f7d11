package registry

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMergeSample(t *testing.T) {
	e := func(args, val string, gen int) SampleEntry {
		return SampleEntry{Args: json.RawMessage(args), Value: json.RawMessage(val), Gen: gen}
	}
	argsOf := func(s []SampleEntry) []string {
		var out []string
		for _, e := range s {
			out = append(out, string(e.Args))
		}
		return out
	}
	for _, tc := range []struct {
		name         string
		cur, add     []SampleEntry
		gen, max, mb int
		want         []string
		wantChanged  bool
	}{
		{"adds canonical", nil, []SampleEntry{e(`{"b":1,"a":2}`, `1`, 1)}, 1, 4, 1000, []string{`{"a":2,"b":1}`}, true},
		{"same input same answer writes nothing", []SampleEntry{e(`{"a":1}`, `1`, 1)}, []SampleEntry{e(`{ "a": 1 }`, `1`, 1)}, 1, 4, 1000, []string{`{"a":1}`}, false},
		{"same input new answer replaces", []SampleEntry{e(`{"a":1}`, `1`, 1), e(`{"a":2}`, `2`, 1)}, []SampleEntry{e(`{"a":1}`, `9`, 1)}, 1, 4, 1000, []string{`{"a":2}`, `{"a":1}`}, true},
		{"oldest dropped past max", []SampleEntry{e(`1`, `1`, 1), e(`2`, `2`, 1)}, []SampleEntry{e(`3`, `3`, 1)}, 1, 2, 1000, []string{`2`, `3`}, true},
		{"oldest dropped past bytes", []SampleEntry{e(`1`, `1111`, 1), e(`2`, `2`, 1)}, []SampleEntry{e(`3`, `3`, 1)}, 1, 9, 6, []string{`2`, `3`}, true},
		{"entry larger than the bound never kept", nil, []SampleEntry{e(`1`, `123456789`, 1)}, 1, 9, 6, nil, false},
		{"other generations dropped", []SampleEntry{e(`1`, `1`, 1)}, []SampleEntry{e(`2`, `2`, 2), e(`3`, `3`, 1)}, 2, 9, 100, []string{`2`}, true},
		{"args that are not JSON dropped", nil, []SampleEntry{e(`{`, `1`, 1)}, 1, 9, 100, nil, false},
		// One input spelled many ways is kept once (the newest spelling): a caller cannot fill the
		// sample with one input, whose changed answer would then block a good repair alone.
		{"one input spelled otherwise is kept once", []SampleEntry{e(`{"x":1,"y":0}`, `1`, 1)},
			[]SampleEntry{e(`{"x":1.0,"y":-0}`, `1`, 1), e(`{"y":0e3,"x":10e-1}`, `1`, 1), e(`{"x":1,"y":0,"y":0}`, `1`, 1)}, 1, 9, 1000, []string{`{"x":1,"y":0}`}, false},
		{"off purges", []SampleEntry{e(`1`, `1`, 1)}, []SampleEntry{e(`2`, `2`, 1)}, 1, 0, 0, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := MergeSample(tc.cur, tc.add, tc.gen, tc.max, tc.mb)
			assert.Equal(t, tc.want, argsOf(got))
			assert.Equal(t, tc.wantChanged, changed)
		})
	}
}

func TestSampleConfigBounds(t *testing.T) {
	for _, tc := range []struct {
		c          *SampleConfig
		max, bytes int
	}{
		{nil, DefaultSampleMax, DefaultSampleMaxBytes},
		{&SampleConfig{Off: true, Max: 5}, 0, 0},
		{&SampleConfig{Max: 5}, 5, DefaultSampleMaxBytes},
		{&SampleConfig{Max: 1 << 20, MaxBytes: 1 << 30}, MaxSampleMax, MaxSampleMaxBytes},
	} {
		t.Run(fmt.Sprint(tc.c), func(t *testing.T) {
			m, b := tc.c.Bounds()
			assert.Equal(t, tc.max, m)
			assert.Equal(t, tc.bytes, b)
		})
	}
}

func TestFingerprintIgnoresSample(t *testing.T) {
	c := Contract{Role: "r", Purpose: "p"}
	d := c
	d.Sample = &SampleConfig{Off: true}
	assert.Equal(t, c.Fingerprint(), d.Fingerprint(), "turning the sample off changes no code")
}
