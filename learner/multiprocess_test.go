package learner

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// TestMultiProcess runs writers in separate processes (this test binary, re-executed), each
// recording its own lessons and confirming a common one in the same domain: no update is lost.
func TestMultiProcess(t *testing.T) {
	if root := os.Getenv("LEARNER_CHILD_ROOT"); root != "" {
		w, _ := strconv.Atoi(os.Getenv("LEARNER_CHILD_ID"))
		s, err := Open(root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if _, _, err := s.Record(Entry{Content: fmt.Sprintf("process %d lesson %d", w, i), Domain: "shared"}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Record(Entry{Content: "common lesson", Domain: "shared"}); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	root := t.TempDir()
	const procs = 3
	cmds := make([]*exec.Cmd, procs)
	for w := range procs {
		cmds[w] = exec.Command(os.Args[0], "-test.run=^TestMultiProcess$", "-test.count=1")
		cmds[w].Env = append(os.Environ(), "LEARNER_CHILD_ROOT="+root, "LEARNER_CHILD_ID="+strconv.Itoa(w))
		if err := cmds[w].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for w, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: %v", w, err)
		}
	}
	s, _ := Open(root, Options{Revalidate: -1})
	all, err := s.List("shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != procs*10+1 {
		t.Fatalf("%d entries, want %d: an update was lost", len(all), procs*10+1)
	}
	for _, e := range all {
		if e.Content == "common lesson" && (e.UseCount != procs*10-1 || e.Confidence != MaxConfidence) {
			t.Fatalf("common lesson: %+v, want %d confirmations", e, procs*10-1)
		}
	}
}
