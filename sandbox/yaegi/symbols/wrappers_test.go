package symbols

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// TestWrappersHandOwnBytes checks the generated wrappers (ownBytes): a guest Write never gets the
// caller's slice, a guest Read fills a buffer of its own whose bytes reach the caller's.
func TestWrappersHandOwnBytes(t *testing.T) {
	caller := []byte("caller's buffer")
	var got []byte
	w := _io_Writer{WWrite: func(p []byte) (int, error) { got = p; return len(p), nil }}
	if _, err := w.Write(caller); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(caller) || &got[0] == &caller[0] {
		t.Errorf("Write handed %q at %p, caller's %p: want a copy", got, &got[0], &caller[0])
	}
	r := _io_Reader{WRead: func(p []byte) (int, error) { got = p; return copy(p, "filled"), nil }}
	buf := make([]byte, 6)
	n, err := r.Read(buf)
	if err != nil || n != 6 || string(buf) != "filled" || &got[0] == &buf[0] {
		t.Errorf("Read: %d %v %q, guest's buffer %p, caller's %p: want the caller's filled from a buffer of the guest's own", n, err, buf, &got[0], &buf[0])
	}
	var kept fmt.State
	f := _fmt_Formatter{WFormat: func(s fmt.State, verb rune) { kept = s; s.Write([]byte("in")) }}
	if s := fmt.Sprintf("%v", f); s != "in" {
		t.Errorf("Format wrote %q, want %q", s, "in")
	}
	if _, err := kept.Write([]byte("late")); err == nil {
		t.Error("a kept fmt.State still writes after Format returned")
	}
}

// BenchmarkWrapperWrite measures the copy a guest Write costs through its wrapper: direct is the
// guest function called with the caller's slice (the old wrapper), wrapper the generated one.
func BenchmarkWrapperWrite(b *testing.B) {
	for _, size := range []int{16, 4096} {
		p := bytes.Repeat([]byte("x"), size)
		guest := func(p []byte) (int, error) { return len(p), nil }
		b.Run(fmt.Sprintf("direct/%d", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = guest(p)
			}
		})
		b.Run(fmt.Sprintf("wrapper/%d", size), func(b *testing.B) {
			b.ReportAllocs()
			var w io.Writer = _io_Writer{WWrite: guest}
			for b.Loop() {
				_, _ = w.Write(p)
			}
		})
	}
}
