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
	f, l, err := s.openWith(id, dec)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, l, &d, nil
}
