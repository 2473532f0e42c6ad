package raw

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	gojson "github.com/goccy/go-json"
)

// Envelope is the form of a paged source's pages (spec: page envelope).
type Envelope int

// The page envelopes.
const (
	Content      Envelope = iota + 1 // server API (payments, transfers, fees): {content, last, number, totalElements}
	Results                          // liquidations list: {results, last, number, totalElements}
	Transactions                     // statements: {transactions: {content, last, number, total_elements}, …}
)

// Page is one page as its envelope gives it.
type Page struct {
	Items  []json.RawMessage // the items, when asked for (Parse); nil from Count
	Count  int               // items on the page
	Last   bool
	Number int   // zero-based
	Total  int64 // items of the whole list
}

// fields are the envelope's fields, nil when absent, with items of type T:
// json.RawMessage to keep them, struct{} to count them without a copy.
type fields[T any] struct {
	Items         *[]T
	Last          *bool
	Number        *int
	TotalElements *int64
}

// flat is the server API's and the liquidation list's envelope.
type flat[T any] struct {
	Content       *[]T   `json:"content"`
	Results       *[]T   `json:"results"`
	Last          *bool  `json:"last"`
	Number        *int   `json:"number"`
	TotalElements *int64 `json:"totalElements"`
}

// statement is a statement's envelope, inside its transactions.
type statement[T any] struct {
	Transactions *struct {
		Content       *[]T   `json:"content"`
		Last          *bool  `json:"last"`
		Number        *int   `json:"number"`
		TotalElements *int64 `json:"total_elements"`
	} `json:"transactions"`
}

// decode reads the envelope's fields from body.
func decode[T any](e Envelope, body []byte) (fields[T], error) {
	if e == Transactions {
		var s statement[T]
		if err := decodeJSON(body, &s); err != nil {
			return fields[T]{}, fmt.Errorf("decode page: %w", err)
		}
		if t := s.Transactions; t != nil {
			return fields[T]{t.Content, t.Last, t.Number, t.TotalElements}, nil
		}
		return fields[T]{}, nil
	}
	var f flat[T]
	if err := decodeJSON(body, &f); err != nil {
		return fields[T]{}, fmt.Errorf("decode page: %w", err)
	}
	items := f.Content
	if e == Results {
		items = f.Results
	}
	return fields[T]{items, f.Last, f.Number, f.TotalElements}, nil
}

// page checks that the envelope has every field and returns its page,
// without the items.
func page[T any](e Envelope, f fields[T]) (Page, error) {
	if e == Transactions {
		if f.Items == nil || f.Last == nil || f.Number == nil || f.TotalElements == nil {
			return Page{}, errors.New("page envelope lacks transactions.content, last, number or total_elements")
		}
	} else {
		var errs []error
		for _, m := range []struct {
			name    string
			present bool
		}{{e.items(), f.Items != nil}, {"last", f.Last != nil}, {"number", f.Number != nil}, {"totalElements", f.TotalElements != nil}} {
			if !m.present {
				errs = append(errs, fmt.Errorf("page envelope lacks %s", m.name))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return Page{}, err
		}
	}
	return Page{Count: len(*f.Items), Last: *f.Last, Number: *f.Number, Total: *f.TotalElements}, nil
}

// Parse reads a page with its items and checks that its envelope has every field.
func (e Envelope) Parse(body []byte) (Page, error) {
	f, err := decode[json.RawMessage](e, body)
	if err != nil {
		return Page{}, err
	}
	p, err := page(e, f)
	if err == nil {
		p.Items = *f.Items
	}
	return p, err
}

// Count is Parse without the items, which it counts without copying them.
// A page it cannot read so (items that are not all objects, which the
// loader quarantines, or no JSON at all) is read by Parse: the same count,
// or the same error.
func (e Envelope) Count(body []byte) (Page, error) {
	f, err := decode[struct{}](e, body)
	if err != nil {
		p, err := e.Parse(body)
		p.Items = nil
		return p, err
	}
	return page(e, f)
}

// Items reads the items of a page, which needs only them (the loader: the
// paging was checked when the page was fetched).
func (e Envelope) Items(body []byte) ([]json.RawMessage, error) {
	f, err := decode[json.RawMessage](e, body)
	if err != nil {
		return nil, err
	}
	if f.Items == nil {
		return nil, fmt.Errorf("page envelope lacks %s", e.items())
	}
	return *f.Items, nil
}

// items names the field of the items.
func (e Envelope) items() string {
	switch e {
	case Results:
		return "results"
	case Transactions:
		return "transactions.content"
	}
	return "content"
}

// decodeJSON decodes with goccy/go-json, which needs a fraction of
// encoding/json's CPU on the millions of items of a large run, and again
// with encoding/json when that fails, for its clearer error.
func decodeJSON(body []byte, v any) error {
	if gojson.Unmarshal(body, v) == nil {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	return json.Unmarshal(body, v)
}
