package tools

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encodedImages returns the same picture as PNG (RGBA and paletted), GIF
// and JPEG (baseline, grey), the standard library's encoders' output.
func encodedImages(t testing.TB, w, h int) map[string][]byte {
	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	pal := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White})
	grey := image.NewGray(image.Rect(0, 0, w, h))
	out := map[string][]byte{}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, rgba))
	out["png"] = bytes.Clone(b.Bytes())
	b.Reset()
	require.NoError(t, png.Encode(&b, pal))
	out["png-paletted"] = bytes.Clone(b.Bytes())
	b.Reset()
	require.NoError(t, gif.Encode(&b, pal, nil))
	out["gif"] = bytes.Clone(b.Bytes())
	b.Reset()
	require.NoError(t, jpeg.Encode(&b, rgba, nil))
	out["jpeg"] = bytes.Clone(b.Bytes())
	b.Reset()
	require.NoError(t, jpeg.Encode(&b, grey, &jpeg.Options{Quality: 10}))
	out["jpeg-grey"] = bytes.Clone(b.Bytes())
	return out
}

func TestImageSizeReadsEachFormatsHeader(t *testing.T) {
	for _, size := range [][2]int{{3, 2}, {1, 1}, {640, 17}, {1000, 4097}} {
		for name, data := range encodedImages(t, size[0], size[1]) {
			w, h, err := imageSize(sniffImage(data), data)
			require.NoError(t, err, name)
			assert.Equal(t, size, [2]int{w, h}, name)
		}
	}
	// WebP: no encoder in the standard library; headers as libwebp writes them.
	webp := func(chunk string, payload ...byte) []byte {
		b := append([]byte("RIFF\x00\x00\x00\x00WEBP"+chunk+"\x00\x00\x00\x00"), payload...)
		return append(b, make([]byte, 16)...)
	}
	for name, c := range map[string]struct {
		data []byte
		w, h int
	}{
		// 400×301: canvas width - 1 = 399 (0x18f), height - 1 = 300 (0x12c), 24 bits each.
		"extended": {webp("VP8X", 0x10, 0, 0, 0, 0x8f, 0x01, 0, 0x2c, 0x01, 0), 400, 301},
		// 3×2 lossless: 2 | 1<<14 after the 0x2f signature.
		"lossless": {webp("VP8L", 0x2f, 0x02, 0x40, 0x00, 0x00), 3, 2},
		// 320×240 lossy key frame; the top two bits of each dimension scale, not size.
		"lossy": {webp("VP8 ", 0x50, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x41, 0xf0, 0x00), 320, 240},
	} {
		require.Equal(t, "image/webp", sniffImage(c.data), name)
		w, h, err := imageSize("image/webp", c.data)
		require.NoError(t, err, name)
		assert.Equal(t, [2]int{c.w, c.h}, [2]int{w, h}, name)
	}
	// Cut short or not an image: no size, no panic.
	for _, cut := range [][]byte{[]byte("\x89PNG\r\n\x1a\n"), []byte("GIF89a\x01"), []byte("\xff\xd8\xff\xe0\x00\x10JFIF"),
		[]byte("\xff\xd8\xff\xda\x00\x08"), webp("VP8 ", 0x51), webp("VP8L", 0x00), []byte("RIFF")} {
		_, _, err := imageSize(sniffImage(cut), cut)
		assert.Error(t, err, "%q", cut)
	}
}

// Wherever image.DecodeConfig reads a size, imageSize reads the same one.
func FuzzImageSizeAgreesWithDecodeConfig(f *testing.F) {
	for _, data := range encodedImages(f, 7, 5) {
		f.Add(data)
		for _, n := range []int{10, 20, 24, 30, 100} {
			if n < len(data) {
				f.Add(data[:n])
			}
		}
	}
	// JPEG quirks image/jpeg accepts before the frame: junk, fill bytes,
	// a stuffed zero, a restart marker, a comment.
	j := encodedImages(f, 9, 4)["jpeg-grey"]
	quirks := append([]byte("\xff\xd8\xff\xfe\x00\x04hijunk\xff\x00\xff\xff\xd0"), j[2:]...)
	if _, _, err := image.DecodeConfig(bytes.NewReader(quirks)); err != nil {
		f.Fatalf("the quirks seed must be one image/jpeg reads: %v", err)
	}
	f.Add(quirks)
	f.Fuzz(func(t *testing.T, data []byte) {
		mime := sniffImage(data)
		w, h, err := imageSize(mime, data)
		cfg, format, derr := image.DecodeConfig(bytes.NewReader(data))
		if derr != nil || "image/"+format != mime {
			return // the decoders are stricter; a lenient size is fine
		}
		require.NoError(t, err, "DecodeConfig read %dx%d", cfg.Width, cfg.Height)
		assert.Equal(t, [2]int{cfg.Width, cfg.Height}, [2]int{w, h})
	})
}
