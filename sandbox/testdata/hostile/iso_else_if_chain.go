// args: [3]
// kind: compile
// stage: compile
// contains: nested more than
package artifact

// An else-if chain nests one level per branch.
func F(x int) int {
	if x == 0 {
		return 0
	} else if x == 1 {
		return 1
	} else if x == 2 {
		return 2
	} else if x == 3 {
		return 3
	} else if x == 4 {
		return 4
	} else if x == 5 {
		return 5
	} else if x == 6 {
		return 6
	} else if x == 7 {
		return 7
	} else if x == 8 {
		return 8
	} else if x == 9 {
		return 9
	} else if x == 10 {
		return 10
	} else if x == 11 {
		return 11
	} else if x == 12 {
		return 12
	} else if x == 13 {
		return 13
	} else if x == 14 {
		return 14
	} else if x == 15 {
		return 15
	} else if x == 16 {
		return 16
	} else if x == 17 {
		return 17
	} else if x == 18 {
		return 18
	} else if x == 19 {
		return 19
	} else if x == 20 {
		return 20
	} else if x == 21 {
		return 21
	} else if x == 22 {
		return 22
	} else if x == 23 {
		return 23
	} else if x == 24 {
		return 24
	} else if x == 25 {
		return 25
	} else if x == 26 {
		return 26
	} else if x == 27 {
		return 27
	} else if x == 28 {
		return 28
	} else if x == 29 {
		return 29
	} else if x == 30 {
		return 30
	} else if x == 31 {
		return 31
	} else if x == 32 {
		return 32
	} else if x == 33 {
		return 33
	} else if x == 34 {
		return 34
	} else if x == 35 {
		return 35
	} else if x == 36 {
		return 36
	} else if x == 37 {
		return 37
	} else if x == 38 {
		return 38
	} else if x == 39 {
		return 39
	} else if x == 40 {
		return 40
	} else if x == 41 {
		return 41
	} else if x == 42 {
		return 42
	} else if x == 43 {
		return 43
	} else if x == 44 {
		return 44
	} else if x == 45 {
		return 45
	} else if x == 46 {
		return 46
	} else if x == 47 {
		return 47
	} else if x == 48 {
		return 48
	} else if x == 49 {
		return 49
	} else if x == 50 {
		return 50
	} else if x == 51 {
		return 51
	} else if x == 52 {
		return 52
	} else if x == 53 {
		return 53
	} else if x == 54 {
		return 54
	} else if x == 55 {
		return 55
	} else if x == 56 {
		return 56
	} else if x == 57 {
		return 57
	} else if x == 58 {
		return 58
	} else if x == 59 {
		return 59
	} else if x == 60 {
		return 60
	} else if x == 61 {
		return 61
	} else if x == 62 {
		return 62
	} else if x == 63 {
		return 63
	} else if x == 64 {
		return 64
	} else if x == 65 {
		return 65
	} else if x == 66 {
		return 66
	} else if x == 67 {
		return 67
	} else if x == 68 {
		return 68
	} else if x == 69 {
		return 69
	} else if x == 70 {
		return 70
	} else if x == 71 {
		return 71
	} else if x == 72 {
		return 72
	} else if x == 73 {
		return 73
	} else if x == 74 {
		return 74
	} else if x == 75 {
		return 75
	} else if x == 76 {
		return 76
	} else if x == 77 {
		return 77
	} else if x == 78 {
		return 78
	} else if x == 79 {
		return 79
	} else if x == 80 {
		return 80
	} else if x == 81 {
		return 81
	} else if x == 82 {
		return 82
	} else if x == 83 {
		return 83
	} else if x == 84 {
		return 84
	} else if x == 85 {
		return 85
	} else if x == 86 {
		return 86
	} else if x == 87 {
		return 87
	} else if x == 88 {
		return 88
	} else if x == 89 {
		return 89
	} else if x == 90 {
		return 90
	} else if x == 91 {
		return 91
	} else if x == 92 {
		return 92
	} else if x == 93 {
		return 93
	} else if x == 94 {
		return 94
	} else if x == 95 {
		return 95
	} else if x == 96 {
		return 96
	} else if x == 97 {
		return 97
	} else if x == 98 {
		return 98
	} else if x == 99 {
		return 99
	} else if x == 100 {
		return 100
	} else if x == 101 {
		return 101
	} else if x == 102 {
		return 102
	} else if x == 103 {
		return 103
	} else if x == 104 {
		return 104
	} else if x == 105 {
		return 105
	} else if x == 106 {
		return 106
	} else if x == 107 {
		return 107
	} else if x == 108 {
		return 108
	} else if x == 109 {
		return 109
	} else if x == 110 {
		return 110
	} else if x == 111 {
		return 111
	} else if x == 112 {
		return 112
	} else if x == 113 {
		return 113
	} else if x == 114 {
		return 114
	} else if x == 115 {
		return 115
	} else if x == 116 {
		return 116
	} else if x == 117 {
		return 117
	} else if x == 118 {
		return 118
	} else if x == 119 {
		return 119
	} else if x == 120 {
		return 120
	} else if x == 121 {
		return 121
	} else if x == 122 {
		return 122
	} else if x == 123 {
		return 123
	} else if x == 124 {
		return 124
	} else if x == 125 {
		return 125
	} else if x == 126 {
		return 126
	} else if x == 127 {
		return 127
	} else if x == 128 {
		return 128
	} else if x == 129 {
		return 129
	} else if x == 130 {
		return 130
	} else if x == 131 {
		return 131
	} else if x == 132 {
		return 132
	} else if x == 133 {
		return 133
	} else if x == 134 {
		return 134
	} else if x == 135 {
		return 135
	} else if x == 136 {
		return 136
	} else if x == 137 {
		return 137
	} else if x == 138 {
		return 138
	} else if x == 139 {
		return 139
	} else if x == 140 {
		return 140
	} else if x == 141 {
		return 141
	} else if x == 142 {
		return 142
	} else if x == 143 {
		return 143
	} else if x == 144 {
		return 144
	} else if x == 145 {
		return 145
	} else if x == 146 {
		return 146
	} else if x == 147 {
		return 147
	} else if x == 148 {
		return 148
	} else if x == 149 {
		return 149
	} else if x == 150 {
		return 150
	} else if x == 151 {
		return 151
	} else if x == 152 {
		return 152
	} else if x == 153 {
		return 153
	} else if x == 154 {
		return 154
	} else if x == 155 {
		return 155
	} else if x == 156 {
		return 156
	} else if x == 157 {
		return 157
	} else if x == 158 {
		return 158
	} else if x == 159 {
		return 159
	} else if x == 160 {
		return 160
	} else if x == 161 {
		return 161
	} else if x == 162 {
		return 162
	} else if x == 163 {
		return 163
	} else if x == 164 {
		return 164
	} else if x == 165 {
		return 165
	} else if x == 166 {
		return 166
	} else if x == 167 {
		return 167
	} else if x == 168 {
		return 168
	} else if x == 169 {
		return 169
	} else if x == 170 {
		return 170
	} else if x == 171 {
		return 171
	} else if x == 172 {
		return 172
	} else if x == 173 {
		return 173
	} else if x == 174 {
		return 174
	} else if x == 175 {
		return 175
	} else if x == 176 {
		return 176
	} else if x == 177 {
		return 177
	} else if x == 178 {
		return 178
	} else if x == 179 {
		return 179
	} else if x == 180 {
		return 180
	} else if x == 181 {
		return 181
	} else if x == 182 {
		return 182
	} else if x == 183 {
		return 183
	} else if x == 184 {
		return 184
	} else if x == 185 {
		return 185
	} else if x == 186 {
		return 186
	} else if x == 187 {
		return 187
	} else if x == 188 {
		return 188
	} else if x == 189 {
		return 189
	} else if x == 190 {
		return 190
	} else if x == 191 {
		return 191
	} else if x == 192 {
		return 192
	} else if x == 193 {
		return 193
	} else if x == 194 {
		return 194
	} else if x == 195 {
		return 195
	} else if x == 196 {
		return 196
	} else if x == 197 {
		return 197
	} else if x == 198 {
		return 198
	} else if x == 199 {
		return 199
	} else if x == 200 {
		return 200
	} else if x == 201 {
		return 201
	} else if x == 202 {
		return 202
	} else if x == 203 {
		return 203
	} else if x == 204 {
		return 204
	} else if x == 205 {
		return 205
	} else if x == 206 {
		return 206
	} else if x == 207 {
		return 207
	} else if x == 208 {
		return 208
	} else if x == 209 {
		return 209
	} else if x == 210 {
		return 210
	} else if x == 211 {
		return 211
	} else if x == 212 {
		return 212
	} else if x == 213 {
		return 213
	} else if x == 214 {
		return 214
	} else if x == 215 {
		return 215
	} else if x == 216 {
		return 216
	} else if x == 217 {
		return 217
	} else if x == 218 {
		return 218
	} else if x == 219 {
		return 219
	} else if x == 220 {
		return 220
	} else if x == 221 {
		return 221
	} else if x == 222 {
		return 222
	} else if x == 223 {
		return 223
	} else if x == 224 {
		return 224
	} else if x == 225 {
		return 225
	} else if x == 226 {
		return 226
	} else if x == 227 {
		return 227
	} else if x == 228 {
		return 228
	} else if x == 229 {
		return 229
	} else if x == 230 {
		return 230
	} else if x == 231 {
		return 231
	} else if x == 232 {
		return 232
	} else if x == 233 {
		return 233
	} else if x == 234 {
		return 234
	} else if x == 235 {
		return 235
	} else if x == 236 {
		return 236
	} else if x == 237 {
		return 237
	} else if x == 238 {
		return 238
	} else if x == 239 {
		return 239
	} else if x == 240 {
		return 240
	} else if x == 241 {
		return 241
	} else if x == 242 {
		return 242
	} else if x == 243 {
		return 243
	} else if x == 244 {
		return 244
	} else if x == 245 {
		return 245
	} else if x == 246 {
		return 246
	} else if x == 247 {
		return 247
	} else if x == 248 {
		return 248
	} else if x == 249 {
		return 249
	} else if x == 250 {
		return 250
	} else if x == 251 {
		return 251
	} else if x == 252 {
		return 252
	} else if x == 253 {
		return 253
	} else if x == 254 {
		return 254
	} else if x == 255 {
		return 255
	} else if x == 256 {
		return 256
	} else if x == 257 {
		return 257
	} else if x == 258 {
		return 258
	} else if x == 259 {
		return 259
	} else if x == 260 {
		return 260
	} else if x == 261 {
		return 261
	} else if x == 262 {
		return 262
	} else if x == 263 {
		return 263
	} else if x == 264 {
		return 264
	} else if x == 265 {
		return 265
	} else if x == 266 {
		return 266
	} else if x == 267 {
		return 267
	} else if x == 268 {
		return 268
	} else if x == 269 {
		return 269
	} else if x == 270 {
		return 270
	} else if x == 271 {
		return 271
	} else if x == 272 {
		return 272
	} else if x == 273 {
		return 273
	} else if x == 274 {
		return 274
	} else if x == 275 {
		return 275
	} else if x == 276 {
		return 276
	} else if x == 277 {
		return 277
	} else if x == 278 {
		return 278
	} else if x == 279 {
		return 279
	} else if x == 280 {
		return 280
	} else if x == 281 {
		return 281
	} else if x == 282 {
		return 282
	} else if x == 283 {
		return 283
	} else if x == 284 {
		return 284
	} else if x == 285 {
		return 285
	} else if x == 286 {
		return 286
	} else if x == 287 {
		return 287
	} else if x == 288 {
		return 288
	} else if x == 289 {
		return 289
	} else if x == 290 {
		return 290
	} else if x == 291 {
		return 291
	} else if x == 292 {
		return 292
	} else if x == 293 {
		return 293
	} else if x == 294 {
		return 294
	} else if x == 295 {
		return 295
	} else if x == 296 {
		return 296
	} else if x == 297 {
		return 297
	} else if x == 298 {
		return 298
	} else if x == 299 {
		return 299
	} else {
		return -1
	}
}
