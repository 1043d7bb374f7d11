// args: []
// want: [true, false]
package artifact

import "unicode"

// Break empties unicode.Upper's ranges (the host's IsUpper reads the same table): the guest
// sees its own copy change, the host's unicode.IsUpper (called through a native function) does not.
func Break() []bool {
	unicode.Upper.R16 = nil
	unicode.Upper.R32 = nil
	for i := range unicode.Lu.R16 {
		unicode.Lu.R16[i] = unicode.Range16{}
	}
	return []bool{unicode.IsUpper('Ä'), unicode.Is(unicode.Upper, 'Ä')}
}
