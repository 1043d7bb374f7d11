// args: []
// want: [907060870, 1996959894, 3993919788]
package artifact

import "hash/crc32"

// Read checksums with, and reads entries of, the IEEE table after hoststate_crc32_table_write
// wrote into its copies (the checksum alone may take a hardware path that ignores the table).
func Read() []uint32 {
	return []uint32{crc32.Checksum([]byte("hello"), crc32.IEEETable), (*crc32.IEEETable)[1], (*crc32.MakeTable(crc32.IEEE))[2]}
}
