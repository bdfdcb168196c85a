package twiliotest

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// trimFrom, when set, is a directory holding Twilio's full published descriptions
// (twilio/twilio-oai, spec/json); TestTrimTwilioOpenAPI then rewrites testdata/ from them.
var trimFrom = flag.String("twilio-oai", "", "rewrite testdata/ from the full Twilio OpenAPI descriptions in this directory")

// oasAPIs are the descriptions the fake is checked against.
var oasAPIs = []string{"api_v2010", "messaging_v1", "trusthub_v1"}

// checkedSchemas are the component schemas the check reads besides the operations' forms.
var checkedSchemas = []string{
	"tollfree_verification_enum_opt_in_type",
	"tollfree_verification_enum_business_type",
	"tollfree_verification_enum_use_case_categories",
	"messaging.v1.service.us_app_to_person",
}

// TestTrimTwilioOpenAPI keeps, of each full description, what TestFieldsAgainstTwilioOpenAPI
// reads: the paths of the fake's endpoints (their operations without responses) and the
// component schemas their forms and the check refer to. Run it when the fake serves a new
// endpoint or to move to a newer twilio-oai:
//
//	git clone https://github.com/twilio/twilio-oai && \
//	go test ./carriers/twilio/twiliotest -run TestTrimTwilioOpenAPI -twilio-oai twilio-oai/spec/json
func TestTrimTwilioOpenAPI(t *testing.T) {
	if *trimFrom == "" {
		t.Skip("rewrites testdata/ only when -twilio-oai names the full descriptions")
	}
	endpoints := append(slices.Clone(Endpoints), MessageFields, BuyFields)
	for _, api := range oasAPIs {
		data, err := os.ReadFile(filepath.Join(*trimFrom, "twilio_"+api+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var full struct {
			Paths      map[string]map[string]json.RawMessage `json:"paths"`
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(data, &full); err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		paths := map[string]map[string]any{}
		schemas := map[string]any{}
		for _, name := range checkedSchemas {
			if s, ok := full.Components.Schemas[name]; ok && strings.HasPrefix(name, schemaPrefix(api)) {
				schemas[name] = s
			}
		}
		for _, e := range endpoints {
			if e.API != api {
				continue
			}
			method := strings.ToLower(e.Method)
			var op map[string]any
			raw, ok := full.Paths[e.Path][method]
			if !ok || json.Unmarshal(raw, &op) != nil {
				continue // the check reports it missing
			}
			delete(op, "responses")
			if paths[e.Path] == nil {
				paths[e.Path] = map[string]any{}
			}
			paths[e.Path][method] = op
			collectRefs(op, full.Components.Schemas, schemas)
		}
		out := map[string]any{"paths": paths, "components": map[string]any{"schemas": schemas}}
		b, err := json.MarshalIndent(out, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "twilio_"+api+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// schemaPrefix keeps the enum schemas in the one description that has them (messaging_v1).
func schemaPrefix(api string) string {
	if api == "messaging_v1" {
		return ""
	}
	return "\x00"
}

// collectRefs copies into out every component schema that v refers to, transitively.
func collectRefs(v any, all, out map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if s, ok := all[name]; ok && out[name] == nil {
				out[name] = s
				collectRefs(s, all, out)
			}
		}
		for _, inner := range x {
			collectRefs(inner, all, out)
		}
	case []any:
		for _, inner := range x {
			collectRefs(inner, all, out)
		}
	}
}
