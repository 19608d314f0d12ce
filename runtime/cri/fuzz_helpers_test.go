package cri

// fuzzBytes reads a fuzzer's input as a stream of small choices. Once the
// input runs out every read returns zero, so any input is a valid program.
type fuzzBytes struct {
	data []byte
}

// byte returns the next input byte, or 0 at the end.
func (b *fuzzBytes) byte() byte {
	if len(b.data) == 0 {
		return 0
	}
	v := b.data[0]
	b.data = b.data[1:]
	return v
}

// intn returns a number in [0, n).
func (b *fuzzBytes) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return int(b.byte()) % n
}

// bool returns the low bit of the next byte.
func (b *fuzzBytes) bool() bool { return b.byte()&1 == 1 }

// int64 returns eight bytes as a signed number.
func (b *fuzzBytes) int64() int64 {
	var v uint64
	for range 8 {
		v = v<<8 | uint64(b.byte())
	}
	return int64(v)
}

// string returns up to max bytes, taken as they are (not necessarily UTF-8).
func (b *fuzzBytes) string(max int) string {
	n := min(b.intn(max+1), len(b.data))
	s := string(b.data[:n])
	b.data = b.data[n:]
	return s
}

// pick returns one of choices.
func pick[T any](b *fuzzBytes, choices ...T) T {
	return choices[b.intn(len(choices))]
}
