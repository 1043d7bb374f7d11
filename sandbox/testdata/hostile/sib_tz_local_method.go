// args: []
// want: ["12:00 UTC +0000 Local","12:00 UTC +0000 Local","12:00 UTC +0000 Local","12:00 UTC +0000 Local","12:00 UTC +0000 Local","12:00 UTC +0000 Local","12:00 UTC +0000 Local"]
package artifact

import "time"

type stamped struct {
	time.Time
	Name string
}

type localer interface{ Local() time.Time }

func viaGeneric[T interface{ Local() time.Time }](t T) time.Time { return t.Local() }

// Locals calls Time.Local every way Go allows: directly, as a method value, as a method
// expression, promoted through an embedded field, through an interface and a type parameter.
// Each must give the sandbox's local zone (UTC), not the host's.
func Locals() []string {
	t := time.Date(2020, 7, 1, 12, 0, 0, 0, time.UTC)
	f := t.Local
	g := time.Time.Local
	s := stamped{Time: t, Name: "s"}
	var l localer = t
	var out []string
	for _, u := range []time.Time{t.Local(), f(), g(t), s.Local(), l.Local(), viaGeneric(t), (&t).Local()} {
		out = append(out, u.Format("15:04 MST -0700")+" "+u.Location().String())
	}
	return out
}
