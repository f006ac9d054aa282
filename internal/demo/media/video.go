package media

import (
	"bytes"
	"encoding/binary"
	"image/jpeg"
	"math"
)

// Clip is a short film the seed makes in code: each frame drawn on a
// canvas, and a mono sound track. MOV stores it as a QuickTime file of
// Photo-JPEG pictures and 16-bit PCM sound, a plain format that ffmpeg
// reads, so the platform transcodes it to HLS like any uploaded video.
// No tool is needed to make it.
type Clip struct {
	Width, Height int
	FPS           int
	// Seconds is the length of the picture; the sound is cut or padded
	// with silence to it.
	Seconds float64
	// Draw paints the frame at t seconds on a fresh canvas.
	Draw func(c *Canvas, t float64)
	// Sound is mono 16-bit audio at SampleRate samples a second.
	Sound []int16
}

// SampleRate is the rate of the sound of clips and chimes.
const SampleRate = sampleRate

// Tone is the chime's notes as samples, a sound track for a clip.
func Tone(freqs []float64, noteSeconds float64) []int16 { return chimeSamples(freqs, noteSeconds) }

// Frames is how many pictures the clip has.
func (c Clip) Frames() int { return int(math.Ceil(c.Seconds * float64(c.FPS))) }

// MOV renders the clip as a QuickTime file: an ftyp atom, the media
// data (every frame, then the sound) and the movie atom that indexes it.
func (c Clip) MOV() []byte {
	frames := c.Frames()
	var data bytes.Buffer
	sizes := make([]uint32, frames)
	for i := range frames {
		cv := NewCanvas(c.Width, c.Height, white)
		c.Draw(cv, float64(i)/float64(c.FPS))
		before := data.Len()
		if err := jpeg.Encode(&data, cv.img, &jpeg.Options{Quality: 82}); err != nil {
			panic(err) // encoding an in-memory picture into a buffer cannot fail
		}
		sizes[i] = uint32(data.Len() - before)
	}
	videoBytes := data.Len()
	samples := int(c.Seconds * sampleRate)
	for i := range samples {
		var s int16
		if i < len(c.Sound) {
			s = c.Sound[i]
		}
		binary.Write(&data, binary.LittleEndian, s)
	}
	ftyp := atom("ftyp", []byte("qt  "), be32(0x200), []byte("qt  "))
	// The media data atom's header is 8 bytes: the first frame follows it.
	videoAt := uint32(len(ftyp) + 8)
	audioAt := videoAt + uint32(videoBytes)
	const movieScale = 1000
	const videoScale = 600 // a multiple of the usual frame rates
	duration := uint32(math.Round(c.Seconds * movieScale))
	frameTicks := uint32(videoScale / c.FPS)
	video := track(1, duration, c.Width, c.Height, "vide",
		mediaHeader(videoScale, uint32(frames)*frameTicks),
		atom("vmhd", be32(1), make([]byte, 8)),
		c.jpegDescription(),
		table("stts", be32(uint32(frames)), be32(frameTicks)),
		table("stsc", be32(1), be32(uint32(frames)), be32(1)),
		sampleSizes(sizes),
		table("stco", be32(videoAt)))
	audio := track(2, duration, 0, 0, "soun",
		mediaHeader(sampleRate, uint32(samples)),
		atom("smhd", be32(0), make([]byte, 4)),
		soundDescription(),
		table("stts", be32(uint32(samples)), be32(1)),
		table("stsc", be32(1), be32(uint32(samples)), be32(1)),
		atom("stsz", be32(0), be32(2), be32(uint32(samples))),
		table("stco", be32(audioAt)))
	mvhd := atom("mvhd", be32(0), be32(0), be32(0), be32(movieScale), be32(duration), be32(0x10000), be16(0x100),
		make([]byte, 10), matrix(), make([]byte, 24), be32(3))
	var out bytes.Buffer
	out.Write(ftyp)
	out.Write(be32(uint32(8 + data.Len())))
	out.WriteString("mdat")
	out.Write(data.Bytes())
	out.Write(atom("moov", mvhd, video, audio))
	return out.Bytes()
}

// track is a trak atom: its header, and the media of kind ("vide" or
// "soun") with its handler, media header, sample description and tables.
func track(id, duration uint32, w, h int, kind string, mdhd, header, stsd []byte, tables ...[]byte) []byte {
	volume := uint16(0)
	if kind == "soun" {
		volume = 0x100
	}
	tkhd := atom("tkhd", be32(0xF), be32(0), be32(0), be32(id), be32(0), be32(duration), make([]byte, 8),
		be16(0), be16(0), be16(volume), be16(0), matrix(), be32(uint32(w)<<16), be32(uint32(h)<<16))
	dinf := atom("dinf", atom("dref", be32(0), be32(1), atom("alis", be32(1))))
	stbl := atom("stbl", append([][]byte{atom("stsd", be32(0), be32(1), stsd)}, tables...)...)
	minf := atom("minf", header, handler("dhlr", "alis"), dinf, stbl)
	return atom("trak", tkhd, atom("mdia", mdhd, handler("mhlr", kind), minf))
}

func mediaHeader(scale, duration uint32) []byte {
	return atom("mdhd", be32(0), be32(0), be32(0), be32(scale), be32(duration), be16(0x7FFF), be16(0))
}

func handler(class, kind string) []byte {
	return atom("hdlr", be32(0), []byte(class), []byte(kind), make([]byte, 12), []byte{0})
}

// jpegDescription is the sample description of Photo-JPEG frames.
func (c Clip) jpegDescription() []byte {
	name := make([]byte, 32)
	name[0] = byte(copy(name[1:], "Photo - JPEG"))
	return atom("jpeg", make([]byte, 6), be16(1), be16(0), be16(0), []byte("lms "), be32(0), be32(512),
		be16(uint16(c.Width)), be16(uint16(c.Height)), be32(72<<16), be32(72<<16), be32(0), be16(1), name,
		be16(24), be16(0xFFFF))
}

// soundDescription is the sample description of mono 16-bit
// little-endian PCM ("sowt").
func soundDescription() []byte {
	return atom("sowt", make([]byte, 6), be16(1), be16(0), be16(0), be32(0), be16(1), be16(16), be16(0), be16(0),
		be32(sampleRate<<16))
}

// table is a sample table atom: version and flags, one entry count,
// then the entry's fields.
func table(kind string, fields ...[]byte) []byte {
	return atom(kind, append([][]byte{be32(0), be32(1)}, fields...)...)
}

func sampleSizes(sizes []uint32) []byte {
	parts := [][]byte{be32(0), be32(0), be32(uint32(len(sizes)))}
	for _, s := range sizes {
		parts = append(parts, be32(s))
	}
	return atom("stsz", parts...)
}

// matrix is the identity transformation of movie and track headers.
func matrix() []byte {
	var b []byte
	for _, v := range []uint32{0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000} {
		b = append(b, be32(v)...)
	}
	return b
}

func atom(kind string, parts ...[]byte) []byte {
	n := 8
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	b = append(b, be32(uint32(n))...)
	b = append(b, kind...)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
