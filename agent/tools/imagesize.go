package tools

import (
	"encoding/binary"
	"errors"
)

// errNoImageSize is imageSize's answer when the header it needs is
// missing or cut short.
var errNoImageSize = errors.New("image size not found in its header")

// imageSize returns the width and height a PNG, GIF, JPEG or WebP image's
// header gives, reading only that header. read_file names the size for the
// model; the standard library's decoders (image/png, image/jpeg,
// image/gif, with zlib and LZW) would add their code and their package
// init to every start for these few bytes. Where image.DecodeConfig reads
// a size, this reads the same one (FuzzImageSizeAgreesWithDecodeConfig); it
// is more lenient (it checks no more than the size's own fields), as a
// description can be.
func imageSize(mime string, b []byte) (w, h int, err error) {
	switch mime {
	case "image/png":
		// The signature, then the IHDR chunk first: length, type, width, height.
		if len(b) < 24 || string(b[12:16]) != "IHDR" {
			return 0, 0, errNoImageSize
		}
		w, h = int(binary.BigEndian.Uint32(b[16:])), int(binary.BigEndian.Uint32(b[20:]))
		if w <= 0 || h <= 0 || w > 1<<31-1 || h > 1<<31-1 {
			return 0, 0, errNoImageSize
		}
		return w, h, nil
	case "image/gif":
		// The logical screen descriptor follows the 6-byte signature.
		if len(b) < 10 {
			return 0, 0, errNoImageSize
		}
		return int(binary.LittleEndian.Uint16(b[6:])), int(binary.LittleEndian.Uint16(b[8:])), nil
	case "image/jpeg":
		return jpegSize(b)
	case "image/webp":
		return webpSize(b)
	}
	return 0, 0, errNoImageSize
}

// jpegSize walks a JPEG's markers to its start of frame, skipping what
// image/jpeg skips (junk before a marker, fill bytes, stuffed zeros,
// restart markers), and stops at the scan or the end: no frame before
// them means no size.
func jpegSize(b []byte) (w, h int, err error) {
	if len(b) < 2 || b[0] != 0xff || b[1] != 0xd8 {
		return 0, 0, errNoImageSize
	}
	i := 2
	for i+1 < len(b) {
		if b[i] != 0xff {
			i++ // junk between segments, as libjpeg and image/jpeg allow
			continue
		}
		marker := b[i+1]
		i += 2
		if marker == 0 {
			continue // a stuffed zero
		}
		for marker == 0xff {
			if i >= len(b) {
				return 0, 0, errNoImageSize
			}
			marker = b[i]
			i++
		}
		switch {
		case marker == 0xd9, marker == 0xda: // the end, or the scan
			return 0, 0, errNoImageSize
		case marker >= 0xd0 && marker <= 0xd7, marker == 0x01: // restarts and TEM carry no length
			continue
		}
		if i+2 > len(b) {
			return 0, 0, errNoImageSize
		}
		n := int(binary.BigEndian.Uint16(b[i:]))
		if n < 2 {
			return 0, 0, errNoImageSize
		}
		// Every start of frame but DHT (c4), JPG (c8) and DAC (cc).
		if marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc {
			// Length, precision, height, width.
			if n < 7 || i+7 > len(b) {
				return 0, 0, errNoImageSize
			}
			h, w = int(binary.BigEndian.Uint16(b[i+3:])), int(binary.BigEndian.Uint16(b[i+5:]))
			return w, h, nil
		}
		i += n
	}
	return 0, 0, errNoImageSize
}

// webpSize reads a WebP's canvas size from its first chunk: VP8X (the
// extended format's canvas), VP8L (lossless) or "VP8 " (lossy key frame).
func webpSize(b []byte) (w, h int, err error) {
	if len(b) < 30 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0, 0, errNoImageSize
	}
	d := b[20:]
	switch string(b[12:16]) {
	case "VP8X":
		// Flags (1 byte), reserved (3), canvas width - 1 and height - 1 (24 bits each).
		w = int(d[4]) | int(d[5])<<8 | int(d[6])<<16
		h = int(d[7]) | int(d[8])<<8 | int(d[9])<<16
		return w + 1, h + 1, nil
	case "VP8L":
		// The signature 0x2f, then width - 1 and height - 1 in 14 bits each.
		if d[0] != 0x2f {
			return 0, 0, errNoImageSize
		}
		v := binary.LittleEndian.Uint32(d[1:])
		return int(v&0x3fff) + 1, int(v>>14&0x3fff) + 1, nil
	case "VP8 ":
		// A key frame's 3-byte tag, the start code, then 14 bits of each
		// dimension (the top two bits scale, which the canvas does not).
		if d[0]&1 != 0 || d[3] != 0x9d || d[4] != 0x01 || d[5] != 0x2a {
			return 0, 0, errNoImageSize
		}
		return int(binary.LittleEndian.Uint16(d[6:]) & 0x3fff), int(binary.LittleEndian.Uint16(d[8:]) & 0x3fff), nil
	}
	return 0, 0, errNoImageSize
}
