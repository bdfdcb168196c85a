package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("SCRATCH", func() {
	It("explores", func() {
		t := newTenant()
		show := func(label string, r *response) { fmt.Printf("%s => %d %v %s\n", label, r.Status, r.Header, r.Body) }
		show("ctype text/plain", t.post("/accounts", `{"name":"a"}`, "Content-Type", "text/plain"))
		show("ctype form", t.post("/accounts", `name=a`, "Content-Type", "application/x-www-form-urlencoded"))
		show("ctype json charset", t.post("/accounts", `{"name":"a"}`, "Content-Type", "application/json; charset=utf-8"))
		show("no ctype", t.post("/accounts", `{"name":"a"}`, "Content-Type", ""))
		show("empty body", t.post("/accounts", ``))
		show("array body", t.post("/accounts", `[1]`))
		show("put", t.request("PUT", "/accounts", nil))
		show("unknown", t.get("/nope"))
		show("unknown nokey", t.withKey("").get("/nope"))
		show("head", t.request("HEAD", "/accounts", nil))
		show("options", t.request("OPTIONS", "/accounts", nil))
		big := `{"name":"` + strings.Repeat("a", 1<<20+10) + `"}`
		show("big", t.post("/accounts", big))
		// chunked
		req := httptest.NewRequest("POST", "https://switchboard.test/accounts", io.MultiReader(strings.NewReader(big)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+t.Key)
		fmt.Println("CL", req.ContentLength)
		rec := httptest.NewRecorder()
		t.api.ServeHTTP(rec, req)
		fmt.Printf("chunked big => %d %s\n", rec.Code, rec.Body.String()[:min(300, rec.Body.Len())])
		req = httptest.NewRequest("POST", "https://switchboard.test/accounts", io.MultiReader(strings.NewReader(big)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "abc")
		req.Header.Set("Authorization", "Bearer "+t.Key)
		rec = httptest.NewRecorder()
		t.api.ServeHTTP(rec, req)
		fmt.Printf("chunked big idem => %d %s\n", rec.Code, rec.Body.String()[:min(300, rec.Body.Len())])
		_ = http.MethodGet
	})
})
