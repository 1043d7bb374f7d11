package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxSize is the largest size ParseSize accepts (1 TiB): far above any memory, output or byte
// budget a forge may grant, and far below where a size times its unit overflows an int64.
const MaxSize int64 = 1 << 40

// ParseSize reads a byte size: a number of bytes ("1048576"), or one with a unit — KiB, MiB,
// GiB, TiB, or KB, MB, GB, TB, K, M, G, T, B, all read as powers of two, in any case
// ("256MB", "64KiB", "1g"). The size is positive and at most MaxSize. It is the one size parser
// of the module: contracts' limits, the CLI's --memory, the operator's maxima and budgets.
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	switch {
	case err != nil && !isDigits(t), t == "":
		return 0, fmt.Errorf("%q is not a size (write e.g. 256MB, 64KiB or 1048576)", s)
	case err == nil && n <= 0:
		return 0, fmt.Errorf("%q is not a size: a size is a positive number of bytes (write e.g. 256MB, 64KiB or 1048576)", s)
	case err != nil || n > MaxSize/mult:
		// Digits only, yet out of int64's range, or past the bound once multiplied: never
		// wrapped around into a negative or small size.
		return 0, fmt.Errorf("%q is too large: the largest size is %s", s, FormatSize(MaxSize))
	}
	return n * mult, nil
}

var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
	{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// FormatSize writes n bytes in the largest binary unit that divides it ("1GiB", "64MiB", "1000B"),
// so that a size in a message reads back through ParseSize.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
