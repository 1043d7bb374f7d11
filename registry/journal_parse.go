package registry

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// recordCounters are the optional counter fields of a journal line, in the order appendRecord
// writes them.
var recordCounters = [...]string{`,"s":`, `,"f":`, `,"i":`, `,"a":`, `,"e":`, `,"c":`, `,"dur":`, `,"max":`}

// decodeRecord decodes one journal line: the fast path for lines appendRecord wrote, else
// encoding/json.
func decodeRecord(line []byte, r *journalRecord) error {
	if parseRecordFast(line, r) {
		return nil
	}
	*r = journalRecord{}
	return json.Unmarshal(line, r)
}

// parseRecordFast decodes a journal line in exactly the form appendRecord writes for a record
// without a failure class (the common case: successes), without reflection. It reports false for
// anything else — a failure record, a field out of order, an escape, a line another writer
// produced — and the caller decodes that line with encoding/json. A CLI process reads every
// journal record not yet compacted to overlay one artifact; this keeps that read cheap.
func parseRecordFast(line []byte, r *journalRecord) bool {
	p := line
	lit := func(s string) bool {
		if len(p) < len(s) || string(p[:len(s)]) != s {
			return false
		}
		p = p[len(s):]
		return true
	}
	num := func(v *int64) bool {
		i := 0
		if i < len(p) && p[i] == '-' {
			i++
		}
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
		n, err := strconv.ParseInt(string(p[:i]), 10, 64)
		if err != nil {
			return false
		}
		*v, p = n, p[i:]
		return true
	}
	str := func() (string, bool) { // up to the closing quote; no escapes accepted
		i := bytes.IndexByte(p, '"')
		if i < 0 || bytes.IndexByte(p[:i], '\\') >= 0 {
			return "", false
		}
		s := string(p[:i])
		p = p[i+1:]
		return s, true
	}
	*r = journalRecord{}
	var ok bool
	if !lit(`{"seq":`) || !num(&r.Seq) || !lit(`,"role":"`) {
		return false
	}
	if r.Role, ok = str(); !ok || !lit(`,"method":"`) {
		return false
	}
	if r.Method, ok = str(); !ok || !lit(`,"at":"`) {
		return false
	}
	at, ok := str()
	if !ok {
		return false
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return false
	}
	r.At = t
	if !lit(`,"calls":`) || !num(&r.Calls) {
		return false
	}
	for i, v := range [...]*int64{&r.S, &r.F, &r.I, &r.A, &r.E, &r.C, &r.Dur, &r.Max} {
		if lit(recordCounters[i]) && !num(v) {
			return false
		}
	}
	if lit(`,"recent":"`) {
		if r.Recent, ok = str(); !ok {
			return false
		}
	}
	if lit(`,"gen":`) && !num(&r.Gen) {
		return false
	}
	return len(p) == 1 && p[0] == '}'
}
