package media

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"math"
)

// Chime is a short clip of bell-like notes, one after the other, as an Ogg
// file of FLAC audio (the audio topic kind takes .ogg): 22.05 kHz mono,
// 16-bit, stored losslessly in verbatim FLAC frames. The encoder is
// minimal on purpose; any FLAC decoder plays what it writes.
func Chime(freqs []float64, noteSeconds float64) []byte {
	samples := chimeSamples(freqs, noteSeconds)
	return oggFLAC(samples, "A short chime", "LMS demo seed")
}

const (
	sampleRate = 22050
	blockSize  = 4096
)

// chimeSamples renders the notes: each has a quick attack, an exponential
// decay and a quieter octave above, and rings on under the next one.
func chimeSamples(freqs []float64, noteSeconds float64) []int16 {
	noteLen := int(noteSeconds * sampleRate)
	ring := noteLen * 2
	total := noteLen*(len(freqs)-1) + ring
	mix := make([]float64, total)
	for i, f := range freqs {
		start := i * noteLen
		for n := 0; n < ring && start+n < total; n++ {
			t := float64(n) / sampleRate
			env := math.Exp(-3.2*t) * math.Min(1, t/0.01)
			v := math.Sin(2*math.Pi*f*t) + 0.3*math.Sin(4*math.Pi*f*t)
			mix[start+n] += 0.32 * env * v
		}
	}
	out := make([]int16, total)
	for i, v := range mix {
		// A short fade-out keeps the end free of clicks.
		if rest := total - i; rest < 512 {
			v *= float64(rest) / 512
		}
		out[i] = int16(math.Max(-1, math.Min(1, v)) * 32767)
	}
	return out
}

// bitWriter writes big-endian bit fields, as FLAC wants.
type bitWriter struct {
	buf  bytes.Buffer
	cur  uint64
	bits uint
}

func (w *bitWriter) write(v uint64, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.cur = w.cur<<1 | (v>>uint(i))&1
		w.bits++
		if w.bits == 8 {
			w.buf.WriteByte(byte(w.cur))
			w.cur, w.bits = 0, 0
		}
	}
}

func (w *bitWriter) bytes() []byte {
	if w.bits > 0 {
		w.write(0, 8-w.bits)
	}
	return w.buf.Bytes()
}

// streamInfo is FLAC's STREAMINFO block body (34 bytes).
func streamInfo(samples []int16) []byte {
	var w bitWriter
	w.write(blockSize, 16)
	w.write(blockSize, 16)
	w.write(0, 24) // frame sizes unknown
	w.write(0, 24)
	w.write(sampleRate, 20)
	w.write(0, 3)  // one channel
	w.write(15, 5) // 16 bits per sample
	w.write(uint64(len(samples)), 36)
	raw := make([]byte, 2*len(samples))
	for i, s := range samples {
		binary.LittleEndian.PutUint16(raw[2*i:], uint16(s))
	}
	sum := md5.Sum(raw)
	for _, b := range sum {
		w.write(uint64(b), 8)
	}
	return w.bytes()
}

// frame is one FLAC frame of verbatim samples.
func frame(number int, samples []int16) []byte {
	var w bitWriter
	w.write(0x3FFE, 14) // sync
	w.write(0, 1)       // reserved
	w.write(0, 1)       // fixed block size
	w.write(0x7, 4)     // block size: 16 bits at the end of the header
	w.write(0x6, 4)     // 22.05 kHz
	w.write(0, 4)       // mono
	w.write(0x4, 3)     // 16 bits per sample
	w.write(0, 1)       // reserved
	for _, b := range utf8Number(number) {
		w.write(uint64(b), 8)
	}
	w.write(uint64(len(samples)-1), 16)
	header := append([]byte(nil), w.bytes()...)
	w.write(uint64(crc8(header)), 8)
	w.write(0, 1) // zero bit
	w.write(1, 6) // VERBATIM subframe
	w.write(0, 1) // no wasted bits
	for _, s := range samples {
		w.write(uint64(uint16(s)), 16)
	}
	body := w.bytes()
	out := make([]byte, len(body), len(body)+2)
	copy(out, body)
	return binary.BigEndian.AppendUint16(out, crc16(out))
}

// utf8Number codes a frame number the way FLAC does, like UTF-8.
func utf8Number(n int) []byte {
	switch {
	case n < 0x80:
		return []byte{byte(n)}
	case n < 0x800:
		return []byte{0xC0 | byte(n>>6), 0x80 | byte(n&0x3F)}
	case n < 0x10000:
		return []byte{0xE0 | byte(n>>12), 0x80 | byte(n>>6&0x3F), 0x80 | byte(n&0x3F)}
	}
	return []byte{0xF0 | byte(n>>18&0x07), 0x80 | byte(n>>12&0x3F), 0x80 | byte(n>>6&0x3F), 0x80 | byte(n&0x3F)}
}

func crc8(data []byte) byte {
	var c byte
	for _, b := range data {
		c ^= b
		for i := 0; i < 8; i++ {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
	}
	return c
}

func crc16(data []byte) uint16 {
	var c uint16
	for _, b := range data {
		c ^= uint16(b) << 8
		for i := 0; i < 8; i++ {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x8005
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// oggFLAC wraps the stream in Ogg pages as the Ogg FLAC mapping says: a
// first page with the mapping header and STREAMINFO, a page with the
// VORBIS_COMMENT block, then one page per audio frame.
func oggFLAC(samples []int16, title, artist string) []byte {
	first := []byte{0x7F, 'F', 'L', 'A', 'C', 1, 0, 0, 1, 'f', 'L', 'a', 'C'}
	first = append(first, 0x00, 0, 0, 34) // STREAMINFO, not the last block
	first = append(first, streamInfo(samples)...)

	var comment []byte
	vendor := "lms demo"
	comment = binary.LittleEndian.AppendUint32(comment, uint32(len(vendor)))
	comment = append(comment, vendor...)
	tags := []string{"TITLE=" + title, "ARTIST=" + artist}
	comment = binary.LittleEndian.AppendUint32(comment, uint32(len(tags)))
	for _, t := range tags {
		comment = binary.LittleEndian.AppendUint32(comment, uint32(len(t)))
		comment = append(comment, t...)
	}
	block := []byte{0x84, byte(len(comment) >> 16), byte(len(comment) >> 8), byte(len(comment))} // last, VORBIS_COMMENT
	block = append(block, comment...)

	var out bytes.Buffer
	const serial = 0x4c4d5331
	seq := uint32(0)
	page := func(flags byte, granule uint64, packet []byte) {
		out.Write(oggPage(flags, granule, serial, seq, packet))
		seq++
	}
	page(0x02, 0, first)
	page(0, 0, block)
	for i, n := 0, 0; n < len(samples); i++ {
		end := min(n+blockSize, len(samples))
		flags := byte(0)
		if end == len(samples) {
			flags = 0x04
		}
		page(flags, uint64(end), frame(i, samples[n:end]))
		n = end
	}
	return out.Bytes()
}

// oggPage is one page holding one whole packet.
func oggPage(flags byte, granule uint64, serial, seq uint32, packet []byte) []byte {
	var lacing []byte
	n := len(packet)
	for n >= 255 {
		lacing = append(lacing, 255)
		n -= 255
	}
	lacing = append(lacing, byte(n))
	var p []byte
	p = append(p, 'O', 'g', 'g', 'S', 0, flags)
	p = binary.LittleEndian.AppendUint64(p, granule)
	p = binary.LittleEndian.AppendUint32(p, serial)
	p = binary.LittleEndian.AppendUint32(p, seq)
	p = append(p, 0, 0, 0, 0) // CRC, filled in below
	p = append(p, byte(len(lacing)))
	p = append(p, lacing...)
	p = append(p, packet...)
	binary.LittleEndian.PutUint32(p[22:], oggCRC(p))
	return p
}

func oggCRC(data []byte) uint32 {
	var c uint32
	for _, b := range data {
		c ^= uint32(b) << 24
		for i := 0; i < 8; i++ {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04C11DB7
			} else {
				c <<= 1
			}
		}
	}
	return c
}
