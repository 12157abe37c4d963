package structured

import (
	"context"
	"errors"
	"io"
	"iter"
	"strings"
	"sync"
)

// ErrBroadcastClosed is returned by Publish after Close.
var ErrBroadcastClosed = errors.New("structured: broadcast closed")

// Broadcast is an append-only log of the items of one stream (the events
// of one response), read by any number of independent subscribers.
//
// Buffering: the broadcast keeps every item published until it is
// garbage collected, so memory is bounded by the stream itself (one
// response), not by how slow a subscriber is. Publish never blocks and
// never waits for subscribers; each subscriber has its own cursor into the
// log, so a slow or stalled subscriber delays nobody, and a subscriber
// that joins late starts from the first item and sees the whole sequence.
//
// All methods are safe for concurrent use. Items are shared between
// subscribers and must be treated as read-only.
type Broadcast[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	err    error
	// wake is closed (and cleared) by the next Publish or Close; it is
	// created only when a subscriber has to wait.
	wake chan struct{}
}

// NewBroadcast returns an open, empty broadcast.
func NewBroadcast[T any]() *Broadcast[T] { return &Broadcast[T]{} }

// Publish appends v and wakes waiting subscribers. It returns
// ErrBroadcastClosed after Close.
func (b *Broadcast[T]) Publish(v T) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrBroadcastClosed
	}
	b.items = append(b.items, v)
	b.signal()
	return nil
}

func (b *Broadcast[T]) signal() {
	if b.wake != nil {
		close(b.wake)
		b.wake = nil
	}
}

// Close ends the stream. Subscribers get the remaining items, then err, or
// io.EOF when err is nil. Only the first Close counts.
func (b *Broadcast[T]) Close(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed, b.err = true, err
	b.signal()
}

// Len returns the number of items published so far.
func (b *Broadcast[T]) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.items)
}

// Items returns a copy of the items published so far.
func (b *Broadcast[T]) Items() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]T(nil), b.items...)
}

// Subscribe returns a new subscriber positioned at the first item.
func (b *Broadcast[T]) Subscribe() *Subscription[T] { return &Subscription[T]{b: b} }

// Subscription is one consumer's cursor into a Broadcast. It is meant for
// a single goroutine; create one subscription per consumer.
type Subscription[T any] struct {
	b    *Broadcast[T]
	next int
}

// Next returns the next item, waiting for it if needed. At the end of the
// stream it returns io.EOF, or the error the broadcast was closed with;
// if ctx ends first, ctx's error.
func (s *Subscription[T]) Next(ctx context.Context) (T, error) {
	var zero T
	for {
		b := s.b
		b.mu.Lock()
		if s.next < len(b.items) {
			v := b.items[s.next]
			s.next++
			b.mu.Unlock()
			return v, nil
		}
		if b.closed {
			err := b.err
			b.mu.Unlock()
			if err == nil {
				err = io.EOF
			}
			return zero, err
		}
		if b.wake == nil {
			b.wake = make(chan struct{})
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

// All iterates over the remaining items. A stream that ends with an error
// (not io.EOF), or a ctx that ends, yields one last (zero, err) pair.
func (s *Subscription[T]) All(ctx context.Context) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			v, err := s.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(v, err)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}

// Response is one model answer as it streams in: Write the text chunks,
// then Close. It parses the text with a Parser and publishes the parse
// events to a Broadcast, so that any number of consumers can Subscribe and
// each see the whole event sequence on their own, concurrently with the
// writer and with each other. Several Responses (say, several requests
// made from one prompt) share nothing.
//
// All methods are safe for concurrent use.
type Response struct {
	mu     sync.Mutex // serializes Write and Close: the parser is single-threaded
	parser *Parser
	text   strings.Builder
	model  *OutputModel

	events *Broadcast[Event]
	done   chan struct{}
	value  any
	err    error
}

// NewResponse returns a Response that parses with the given parser options
// (WithHandler is overridden: events go to the broadcast). When model is
// not nil, the final value is coerced and validated by it.
func NewResponse(model *OutputModel, opts ...Option) *Response {
	r := &Response{events: NewBroadcast[Event](), done: make(chan struct{}), model: model}
	opts = append(opts, WithHandler(func(e Event) { _ = r.events.Publish(e) }))
	r.parser = NewParser(opts...)
	return r
}

// Write feeds the next chunk of the answer's text.
func (r *Response) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.text.Write(p)
	return r.parser.Write(p)
}

// WriteString feeds the next chunk of the answer's text.
func (r *Response) WriteString(s string) (int, error) { return r.Write([]byte(s)) }

// Close ends the answer: it completes the parse and closes the event
// stream. It returns the parse or validation error, if any.
func (r *Response) Close() error { return r.CloseWithError(nil) }

// CloseWithError ends the answer early because of err (say, the model
// failed); subscribers get err after the events so far. With a nil err
// it is Close. Only the first call counts; later calls return its result.
func (r *Response) CloseWithError(err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	default:
	}
	perr := r.parser.Close()
	switch {
	case err != nil:
		r.err = err
	case perr != nil:
		r.err = perr
	default:
		r.value = r.parser.Value()
		if r.model != nil {
			r.value = r.model.Coerce(r.value)
			r.err = r.model.Validate(r.value)
		}
	}
	r.events.Close(r.err)
	close(r.done)
	return r.err
}

// Subscribe returns an independent cursor over all the response's events,
// from the first one.
func (r *Response) Subscribe() *Subscription[Event] { return r.events.Subscribe() }

// Events returns the broadcast of the response's events.
func (r *Response) Events() *Broadcast[Event] { return r.events }

// Wait waits for Close and returns the final value (coerced and validated
// when the response has a model) or the error.
func (r *Response) Wait(ctx context.Context) (any, error) {
	select {
	case <-r.done:
		return r.value, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Text returns the answer's text received so far.
func (r *Response) Text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.text.String()
}
