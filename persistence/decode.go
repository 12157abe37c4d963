package persistence

import (
	"encoding/json"
	"errors"
)

// Decoded is what OpenDecoded read besides the Loaded: the records
// decoded, and why some could not be.
type Decoded[T any] struct {
	// Values[i] is Loaded.Records[i] decoded.
	Values []T
	// Errs[i] is the error of decoding Loaded.Records[i], which is valid
	// JSON of the wrong shape (nil: decoded). Such a record is kept, as
	// Open keeps it: it is the caller's to skip or report.
	Errs []error
}

// OpenDecoded is Open that also decodes every record into a T, once: the
// scan that checks each line is one JSON object decodes it with decode
// instead of only validating it, on several goroutines for a long file
// (decode must be safe for concurrent use on distinct values). decode
// must reject what is not JSON with a *json.SyntaxError (as
// encoding/json's Unmarshal does); any other error is checked again with
// json.Valid, so a decoder that stops at the first field of the wrong type
// cannot make a torn or bad line a record. The rules for torn and bad
// lines are Open's.
func OpenDecoded[T any](s *Store, id string, decode func(rec []byte, v *T) error) (*File, *Loaded, *Decoded[T], error) {
	return OpenDecodedStream(s, id, decode, Stream[T]{})
}

// Stream is what OpenDecodedStream tells its caller while it reads a
// session. Both functions run on OpenDecodedStream's goroutine.
type Stream[T any] struct {
	// Opened, if set, is called once the header is read and checked,
	// before any record is decoded, with the file's content (data, not to
	// be kept or changed; the records start at headerEnd). An error from
	// it ends the open and is returned as it is; the file is left as it
	// was.
	Opened func(h Header, data []byte, headerEnd int64) error
	// Record, if set, is called with each record, in file order, as soon
	// as it and every line before it have been decoded, while later lines
	// still are (so a caller can act on the first records of a long file
	// before the rest is read): i is its index in Loaded.Records, off
	// where its line starts, v and err what Decoded will hold for it (v
	// only until Record returns: Decoded's values move when the scan
	// ends). A torn last line never reaches it, a bad line neither.
	Record func(i int, off int64, v *T, err error)
}

// OpenDecodedStream is OpenDecoded that tells st what it reads as it
// reads it (Stream).
func OpenDecodedStream[T any](s *Store, id string, decode func(rec []byte, v *T) error, st Stream[T]) (*File, *Loaded, *Decoded[T], error) {
	var d Decoded[T]
	dec := &decoder{
		alloc: func(n int) {
			d.Values = make([]T, n)
			d.Errs = make([]error, n)
		},
		check: func(k int, rec []byte) error {
			err := decode(rec, &d.Values[k])
			if err == nil {
				return nil
			}
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) || !json.Valid(rec) {
				return errBadJSON
			}
			d.Errs[k] = err
			return nil
		},
		keep: func(kept []int) {
			// Records are the kept lines in order, so compacting in place
			// only ever moves a value down.
			for i, k := range kept {
				if i != k {
					d.Values[i], d.Errs[i] = d.Values[k], d.Errs[k]
				}
			}
			clear(d.Values[len(kept):])
			d.Values, d.Errs = d.Values[:len(kept):len(kept)], d.Errs[:len(kept):len(kept)]
		},
	}
	dec.opened = st.Opened
	if st.Record != nil {
		dec.each = func(i, k int, off int64) { st.Record(i, off, &d.Values[k], d.Errs[k]) }
	}
	f, l, err := s.openWith(id, dec)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, l, &d, nil
}
