package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// AddRule returns a configuration file's contents with r appended to the
// rules of kind (allow, ask or deny). Empty data starts a new file. The
// file must be valid first; an existing rule with the same text is not
// added twice. Keys keep their values but not their order or layout.
func AddRule(name string, data []byte, kind string, r Rule) ([]byte, error) {
	if err := checkKind(kind); err != nil {
		return nil, err
	}
	doc := map[string]any{}
	if len(bytes.TrimSpace(data)) > 0 {
		if _, err := ParseConfig(name, data); err != nil {
			return nil, err
		}
		if err := decodeAny(data, &doc); err != nil {
			return nil, err
		}
	}
	fb := child(doc, "forgebox")
	rules := child(fb, "rules")
	list, _ := rules[kind].([]any)
	for _, item := range list {
		var old Rule
		if b, err := json.Marshal(item); err == nil && json.Unmarshal(b, &old) == nil && old.Text() == r.Text() &&
			(old.Command != "") == (r.Command != "") {
			return data, nil
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var item any
	if err := decodeAny(b, &item); err != nil {
		return nil, err
	}
	rules[kind] = append(list, item)
	return encodeChecked(name, doc)
}

// RemoveRules returns a configuration file's contents without the rules
// drop selects, and the rules it removed.
func RemoveRules(name string, data []byte, drop func(kind string, r Rule) bool) ([]byte, []Rule, error) {
	if _, err := ParseConfig(name, data); err != nil {
		return nil, nil, err
	}
	doc := map[string]any{}
	if err := decodeAny(data, &doc); err != nil {
		return nil, nil, err
	}
	fb, _ := doc["forgebox"].(map[string]any)
	rules, _ := fb["rules"].(map[string]any)
	var removed []Rule
	for _, kind := range []string{"allow", "ask", "deny"} {
		list, _ := rules[kind].([]any)
		kept := list[:0]
		for _, item := range list {
			var r Rule
			b, _ := json.Marshal(item)
			if err := json.Unmarshal(b, &r); err == nil && drop(kind, r) {
				removed = append(removed, r)
				continue
			}
			kept = append(kept, item)
		}
		if list != nil {
			rules[kind] = kept
		}
	}
	if len(removed) == 0 {
		return data, nil, nil
	}
	out, err := encodeChecked(name, doc)
	return out, removed, err
}

func checkKind(kind string) error {
	switch kind {
	case "allow", "ask", "deny":
		return nil
	}
	return fmt.Errorf("unknown rule kind %q (want allow, ask or deny)", kind)
}

func child(m map[string]any, key string) map[string]any {
	c, ok := m[key].(map[string]any)
	if !ok {
		c = map[string]any{}
		m[key] = c
	}
	return c
}

func decodeAny(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// encodeChecked renders a document and checks it reads back as a valid
// configuration: an edit never leaves a file forgebox refuses.
func encodeChecked(name string, doc map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if _, err := ParseConfig(name, b.Bytes()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
