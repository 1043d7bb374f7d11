package sandbox

import (
	"net/netip"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.215.14":          true,
		"8.8.8.8":                true,
		"2606:4700:4700::1111":   true,
		"127.0.0.1":              false,
		"127.1.2.3":              false,
		"10.1.2.3":               false,
		"172.16.0.1":             false,
		"192.168.1.1":            false,
		"169.254.169.254":        false, // cloud metadata
		"100.64.0.1":             false, // carrier-grade NAT
		"0.0.0.0":                false,
		"0.1.2.3":                false,
		"224.0.0.1":              false,
		"255.255.255.255":        false,
		"198.18.0.1":             false,
		"192.0.2.1":              false,
		"::1":                    false,
		"::":                     false,
		"::ffff:127.0.0.1":       false, // IPv4-mapped loopback
		"::ffff:169.254.169.254": false,
		"fe80::1":                false,
		"fc00::1":                false,
		"fd12:3456::1":           false,
		"ff02::1":                false,
		"64:ff9b::7f00:1":        false, // NAT64 of 127.0.0.1
		"2001:db8::1":            false,
	} {
		ip, err := netip.ParseAddr(addr)
		require.NoError(t, err)
		assert.Equal(t, want, publicAddr(ip), addr)
	}
}

func TestNamesAddress(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://127.0.0.1:8080/":   true,
		"http://[::1]:80/":         true,
		"http://localhost/":        true,
		"http://LOCALHOST./":       true,
		"http://app.localhost/":    true,
		"http://api.example.com/":  false,
		"http://localhost.evil/":   false,
		"http://127.0.0.1.nip.io/": false,
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, want, namesAddress(u), raw)
	}
}

// TestFinishSaysAHostFailureOnce: code that returns the error a host call gave it, unchanged,
// was reported as the host failure followed by "(then: " and the same words again (the demo's
// 503 step printed "http GET ...: status 503 (then: sandbox: host: http GET ...: status 503)").
// What the code added to the error is still said.
func TestFinishSaysAHostFailureOnce(t *testing.T) {
	hostErr := &Error{Kind: KindHost, Message: "http GET api.example.com: status 503"}
	for returned, want := range map[string]string{
		hostErr.Error():                       "http GET api.example.com: status 503",
		hostErr.Message:                       "http GET api.example.com: status 503",
		"fetch page: " + hostErr.Error():      "http GET api.example.com: status 503 (then: fetch page: sandbox: host: http GET api.example.com: status 503)",
		"page empty after a failed host call": "http GET api.example.com: status 503 (then: page empty after a failed host call)",
	} {
		h := NewHost(t.Context(), Input{})
		h.fail(hostErr)
		err := h.Finish(nil, &Error{Kind: KindReturned, Message: returned})
		e := AsError(err)
		assert.Equal(t, KindHost, e.Kind, returned)
		assert.Equal(t, want, e.Message, returned)
	}
}
