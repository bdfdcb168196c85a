package twiliotest

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFieldsAgainstTwilioOpenAPI checks the fake field for field against Twilio's published
// OpenAPI descriptions (twilio/twilio-oai, spec/json): every operation the fake serves exists
// there with its method; every field the fake accepts is a property of the operation's form;
// every field the description requires, the fake requires; and the enumerations the fake checks
// are the description's. It reads the parts of the descriptions it needs from testdata/ (see
// TestTrimTwilioOpenAPI, and testdata/README.md for their origin and licence).
func TestFieldsAgainstTwilioOpenAPI(t *testing.T) {
	specs := map[string]*oas{}
	for _, api := range oasAPIs {
		data, err := os.ReadFile(filepath.Join("testdata", "twilio_"+api+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var o oas
		if err := json.Unmarshal(data, &o); err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		specs[api] = &o
	}
	for _, e := range append(slices.Clone(Endpoints), MessageFields, BuyFields) {
		o := specs[e.API]
		raw, ok := o.Paths[e.Path][strings.ToLower(e.Method)]
		var op operation
		if !ok || json.Unmarshal(raw, &op) != nil {
			t.Errorf("%s %s: no such operation in twilio_%s.json", e.Method, e.Path, e.API)
			continue
		}
		form := o.form(&op)
		if e.Method != http.MethodPost {
			if len(e.Required)+len(e.Optional) > 0 {
				t.Errorf("%s %s: the fake takes form fields the operation has none of", e.Method, e.Path)
			}
			continue
		}
		for _, f := range append(slices.Clone(e.Required), e.Optional...) {
			if _, ok := form.Properties[f]; !ok {
				t.Errorf("%s %s: the fake accepts %s, which Twilio's description does not declare", e.Method, e.Path, f)
			}
		}
		for _, f := range form.Required {
			if !slices.Contains(e.Required, f) {
				t.Errorf("%s %s: Twilio requires %s; the fake does not", e.Method, e.Path, f)
			}
		}
	}
	msg := specs["messaging_v1"]
	for name, ours := range map[string][]string{
		"tollfree_verification_enum_opt_in_type":         optInTypes,
		"tollfree_verification_enum_business_type":       tollFreeBusinessTypes,
		"tollfree_verification_enum_use_case_categories": useCaseCategories,
	} {
		s := msg.Components.Schemas[name]
		theirs := s.Enum
		if s.Items != nil {
			theirs = s.Items.Enum
		}
		if !slices.Equal(sorted(theirs), sorted(ours)) {
			t.Errorf("%s: the fake has %v, Twilio's description %v", name, ours, theirs)
		}
	}
	for _, sid := range []string{"sid", "brand_registration_sid", "messaging_service_sid"} {
		if p := msg.Components.Schemas["messaging.v1.service.us_app_to_person"].Properties[sid]; p.Pattern == "" {
			t.Errorf("us_app_to_person.%s: no pattern in Twilio's description", sid)
		}
	}
}

func sorted(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}

// oas is the part of an OpenAPI description the test reads.
type oas struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

type operation struct {
	RequestBody struct {
		Content map[string]struct {
			Schema *schema `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
}

type schema struct {
	Ref        string             `json:"$ref"`
	Required   []string           `json:"required"`
	Properties map[string]*schema `json:"properties"`
	Enum       []string           `json:"enum"`
	Items      *schema            `json:"items"`
	Pattern    string             `json:"pattern"`
}

// form is the form-encoded request body schema of an operation, its reference resolved.
func (o *oas) form(op *operation) *schema {
	c, ok := op.RequestBody.Content["application/x-www-form-urlencoded"]
	if !ok || c.Schema == nil {
		return &schema{}
	}
	s := c.Schema
	if s.Ref != "" {
		s = o.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
	}
	return s
}
