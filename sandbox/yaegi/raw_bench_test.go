package yaegi

import (
	"context"
	"reflect"
	"testing"

	"github.com/traefik/yaegi/interp"
)

func BenchmarkRawExec(b *testing.B) {
	var out any
	var a0, a1 int = 1, 2
	for _, c := range []struct{ name, src, call string }{
		{"empty", "package main\nfunc F() {}\n", "F()"},
		{"assign", "package main\nimport s \"forge/s\"\nfunc F() { s.Out = 3 }\n", "F()"},
		{"expr", "package main\nimport s \"forge/s\"\nfunc Add(a, b int) int { return a + b }\n", "s.Out = Add(s.A0, s.A1)"},
		{"stub", "package main\nimport s \"forge/s\"\nfunc Add(a, b int) int { return a + b }\nfunc F() { s.Out = Add(s.A0, s.A1) }\n", "F()"},
	} {
		b.Run(c.name, func(b *testing.B) {
			in := interp.New(interp.Options{})
			in.Use(interp.Exports{"forge/s/s": {"Out": reflect.ValueOf(&out).Elem(), "A0": reflect.ValueOf(&a0).Elem(), "A1": reflect.ValueOf(&a1).Elem()}})
			if _, err := in.Eval(c.src); err != nil {
				b.Fatal(err)
			}
			p, err := in.Compile(c.call)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := in.ExecuteWithContext(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			b.Logf("out=%v", out)
		})
	}
}
