// args: []
// want: ["local 1", "decoded x", 2, true]
package artifact

type place struct{ name string }

func (p place) Local() string { return "local 1" }

type decoder interface{ Decode(s string) string }

type upper struct{}

func (upper) Decode(s string) string { return "decoded " + s }

type parser interface{ UnmarshalText(s string) int }

type counter struct{}

func (counter) UnmarshalText(s string) int { return len(s) }

type scanner struct{ Error bool }

func (s *scanner) Init(n int) *scanner { s.Error = n > 0; return s }

// Own uses the names the zone and stderr rewrites look for (Local, Decode, UnmarshalText, Init,
// Error) on types and interfaces of its own: they are left alone and work as written.
func Own() []any {
	var d decoder = upper{}
	var p parser = counter{}
	var s scanner
	return []any{place{}.Local(), d.Decode("x"), p.UnmarshalText("ab"), s.Init(1).Error}
}
