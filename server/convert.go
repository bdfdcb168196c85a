package server

import (
	"encoding/json"
	"fmt"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// page converts a list operation's query parameters.
func page(after *gen.After, before *gen.Before, limit *gen.Limit) store.Page {
	var p store.Page
	if after != nil {
		p.After = *after
	}
	if before != nil {
		p.Before = *before
	}
	if limit != nil {
		p.Limit = *limit
	}
	return p
}

func pagination(c store.Cursors) gen.Pagination {
	return gen.Pagination{NextCursor: c.Next, PreviousCursor: c.Previous}
}

func mapSlice[S, D any](in []S, f func(*S) D) []D {
	out := make([]D, len(in))
	for i := range in {
		out[i] = f(&in[i])
	}
	return out
}

func metadataOut(m store.Metadata) gen.Metadata {
	if m == nil {
		return gen.Metadata{}
	}
	return gen.Metadata(m)
}

// metadataIn converts a request's metadata (nil when absent), refusing keys the contract does not
// allow; field is the object's path in the request.
func metadataIn(field string, m *gen.Metadata) (store.Metadata, error) {
	if m == nil {
		return nil, nil
	}
	if err := service.CheckMetadataKeys(field, *m); err != nil {
		return nil, err
	}
	out := store.Metadata(*m)
	if out == nil {
		out = store.Metadata{}
	}
	return out, nil
}

// shortenLinks reads settings.link_shortening in either of its forms: Surge's "enabled" or
// "disabled", or the deprecated boolean (validated before it gets here).
func shortenLinks(s *gen.MessageSettings) bool {
	if s == nil || s.LinkShortening == nil {
		return false
	}
	if v, err := s.LinkShortening.AsLinkShortening(); err == nil {
		return v == gen.Enabled
	}
	on, _ := s.LinkShortening.AsMessageSettingsLinkShortening1()
	return on
}

// mergeJSON overlays the object patch onto the object base, recursing into nested objects, so a
// PATCH of organization.address.line2 keeps the rest of the address.
func mergeJSON(base string, patch any) (string, error) {
	var dst map[string]any
	if err := json.Unmarshal([]byte(base), &dst); err != nil || dst == nil {
		dst = map[string]any{}
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return "", fmt.Errorf("encode patch: %w", err)
	}
	var src map[string]any
	if err := json.Unmarshal(b, &src); err != nil {
		return "", fmt.Errorf("decode patch: %w", err)
	}
	var merge func(dst, src map[string]any)
	merge = func(dst, src map[string]any) {
		for k, v := range src {
			sub, isObj := v.(map[string]any)
			cur, curObj := dst[k].(map[string]any)
			if isObj && curObj {
				merge(cur, sub)
				continue
			}
			dst[k] = v
		}
	}
	merge(dst, src)
	out, err := json.Marshal(dst)
	return string(out), err
}
