// args: []
// want: [907060870, 907060870]
// backends: yaegi
package artifact

import "hash/crc32"

// Poison writes into crc32.IEEETable and into the table MakeTable(IEEE) returns (the package's
// own, once): both are this interpreter's copies now, so the host's checksums stay right.
func Poison() []uint32 {
	p := crc32.IEEETable
	(*p)[1] = 0
	t := crc32.MakeTable(crc32.IEEE)
	(*t)[2] = 0
	return []uint32{crc32.ChecksumIEEE([]byte("hello")), crc32.Checksum([]byte("hello"), crc32.MakeTable(crc32.IEEE))}
}
