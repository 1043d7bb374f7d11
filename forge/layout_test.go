package forge

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMELayoutNamesEveryPackage: the README's "Layout" map names every package of the
// module (its path in backticks, or a `dir/...` above it), and names none that is gone.
func TestREADMELayoutNamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal(`README.md has no "## Layout" section`)
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z][a-z0-9/._]*)`").FindAllStringSubmatch(layout, -1) {
		named[m[1]] = true
	}
	var pkgs []string
	seen := map[string]bool{}
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != ".." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel("..", filepath.Dir(path))
		if p := filepath.ToSlash(rel); !seen[p] {
			seen[p] = true
			pkgs = append(pkgs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	covered := func(p string) bool {
		for q := p; q != "."; q = filepath.ToSlash(filepath.Dir(q)) {
			if named[q+"/..."] || (q == p && named[p]) {
				return true
			}
		}
		return false
	}
	for _, p := range pkgs {
		if !covered(p) {
			t.Errorf("package %s is not in README.md's Layout: add a row (or name it in one) saying what it owns", p)
		}
	}
	for n := range named {
		if d, ok := strings.CutSuffix(n, "/..."); ok {
			n = d
		}
		if st, err := os.Stat(filepath.Join("..", n)); strings.Contains(n, "/") || n == "forge" {
			if err != nil || !st.IsDir() {
				t.Errorf("README.md's Layout names %s, which is not a directory of the module", n)
			}
		}
	}
}
