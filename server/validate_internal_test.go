package server

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/switchboard/switchboard/gen"
)

var _ = Describe("Which request bodies bind the validated value", func() {
	closed := func(props openapi3.Schemas) *openapi3.SchemaRef {
		s := openapi3.NewObjectSchema()
		s.Properties = props
		s.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.BoolPtr(false)}
		return s.NewRef()
	}
	open := func(props openapi3.Schemas) *openapi3.SchemaRef {
		s := openapi3.NewObjectSchema()
		s.Properties = props
		return s.NewRef()
	}
	str := openapi3.NewStringSchema().NewRef()
	isClosed := func(ref *openapi3.SchemaRef) bool { return closedSchema(ref, map[*openapi3.Schema]bool{}) }

	It("keeps it only when no object in the body takes members it does not name", func() {
		Expect(isClosed(closed(openapi3.Schemas{"to": str}))).To(BeTrue())
		Expect(isClosed(open(openapi3.Schemas{"to": str}))).To(BeFalse())
		Expect(isClosed(closed(openapi3.Schemas{"inner": open(openapi3.Schemas{"a": str})}))).To(BeFalse())
		Expect(isClosed(closed(openapi3.Schemas{"list": openapi3.NewArraySchema().WithItems(open(openapi3.Schemas{"a": str}).Value).NewRef()}))).To(BeFalse())
		union := &openapi3.Schema{OneOf: openapi3.SchemaRefs{str, open(openapi3.Schemas{"a": str})}}
		Expect(isClosed(closed(openapi3.Schemas{"u": union.NewRef()}))).To(BeFalse())
		union.OneOf[1] = closed(openapi3.Schemas{"a": str})
		Expect(isClosed(closed(openapi3.Schemas{"u": union.NewRef()}))).To(BeTrue())
		// A map (metadata) matches its keys exactly however it is bound.
		Expect(isClosed(closed(openapi3.Schemas{"metadata": openapi3.NewObjectSchema().WithAnyAdditionalProperties().NewRef()}))).To(BeTrue())
	})

	It("keeps it for a send, whose body is closed", func() {
		spec, err := gen.GetSwagger()
		Expect(err).NotTo(HaveOccurred())
		Expect(closedBody(spec.Paths.Find("/accounts/{account_id}/messages").Post)).To(BeTrue())
	})

	It("skips the setting of defaults only for operations whose schemas have none", func() {
		spec, err := gen.GetSwagger()
		Expect(err).NotTo(HaveOccurred())
		send := spec.Paths.Find("/accounts/{account_id}/messages")
		Expect(setsDefaults(send, send.Post)).To(BeFalse())
		Expect(operationOptions(send, send.Post).SkipSettingDefaults).To(BeTrue())
		// A list's limit has a default; so has a token's lifetime, in its body.
		Expect(setsDefaults(send, send.Get)).To(BeTrue())
		Expect(operationOptions(send, send.Get).SkipSettingDefaults).To(BeFalse())
		tokens := spec.Paths.Find("/users/{user_id}/tokens")
		Expect(setsDefaults(tokens, tokens.Post)).To(BeTrue())
		// Defaults deep in a body: in an item of an array in a branch of a composition.
		deep := openapi3.NewObjectSchema().WithProperty("a", openapi3.NewArraySchema().WithItems(
			&openapi3.Schema{OneOf: openapi3.SchemaRefs{openapi3.NewStringSchema().WithDefault("x").NewRef()}}))
		op := &openapi3.Operation{RequestBody: &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithJSONSchema(deep)}}
		Expect(setsDefaults(&openapi3.PathItem{}, op)).To(BeTrue())
		deep.Properties["a"].Value.Items.Value.OneOf[0].Value.Default = nil
		Expect(setsDefaults(&openapi3.PathItem{}, op)).To(BeFalse())
	})
})
