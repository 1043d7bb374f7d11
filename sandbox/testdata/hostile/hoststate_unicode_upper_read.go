// args: []
// want: [true, true]
package artifact

import "unicode"

// Read asks whether Ä is upper case after hoststate_unicode_table_write emptied its tables.
func Read() []bool { return []bool{unicode.IsUpper('Ä'), unicode.Is(unicode.Upper, 'Ä')} }
