package registry

import "testing"

func TestIsURL(t *testing.T) {
	for spec, want := range map[string]bool{
		"nats://host:4222/forge": true, "clitest:///tmp/x": true, "foo://x": true,
		"/var/lib/forge": false, "./store": false, "relative/dir": false, "": false,
		"a/b://c": false, `C:\forge://x`: false, "://x": false,
	} {
		if got := IsURL(spec); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", spec, got, want)
		}
	}
}

func TestSameStore(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"nats://h:4222/forge", "nats://h:4222/forge", true},
		{"nats://h:4222/forge", "nats://h:4222/other", false},
		{"store", "./store", true},
		{"store", "store/../store", true},
		{"store", "other", false},
		{"nats://h/x", "nats:", false},
		{"a/b://c", "./a/b://c", true}, // a directory, by OpenBackend's rule
	} {
		if got := SameStore(c.a, c.b); got != c.want {
			t.Errorf("SameStore(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
