package server

import (
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/gen"
)

var _ = Describe("The answer to GET /accounts/{id}", func() {
	texts := []string{"", "plain", `q"uo\te`, "<b>&amp;</b>", "a\x00b\x01\x1f\x7f", "\b\f\n\r\t", "\xff\xfe", "a\xc3",
		"\u2028\u2029", "é 日本 🎉", "end\\"}
	account := func(r *rand.Rand) gen.Account {
		text := func() string {
			var b strings.Builder
			for range r.IntN(4) {
				b.WriteString(texts[r.IntN(len(texts))])
			}
			return b.String()
		}
		opt := func() *string {
			if r.IntN(3) == 0 {
				return nil
			}
			s := text()
			return &s
		}
		var a gen.Account
		// Every string and optional string of the account, however deep, is random text.
		var fill func(v reflect.Value)
		fill = func(v reflect.Value) {
			switch v.Kind() {
			case reflect.Struct:
				for i := range v.NumField() {
					fill(v.Field(i))
				}
			case reflect.String:
				v.SetString(text())
			case reflect.Bool:
				v.SetBool(r.IntN(2) == 0)
			case reflect.Pointer:
				switch v.Type().Elem().Kind() {
				case reflect.String:
					if s := opt(); s != nil {
						p := reflect.New(v.Type().Elem())
						p.Elem().SetString(*s)
						v.Set(p)
					}
				case reflect.Slice:
					switch r.IntN(4) {
					case 0: // nil
					case 1:
						v.Set(reflect.New(v.Type().Elem())) // a nil slice
					default:
						s := reflect.MakeSlice(v.Type().Elem(), r.IntN(3), 3)
						for i := range s.Len() {
							s.Index(i).SetString(text())
						}
						p := reflect.New(v.Type().Elem())
						p.Elem().Set(s)
						v.Set(p)
					}
				default:
					Fail("a field of a type the spec does not fill: " + v.Type().String())
				}
			default:
				Fail("a field of a type the spec does not fill: " + v.Type().String())
			}
		}
		fill(reflect.ValueOf(&a).Elem())
		return a
	}

	It("is the generated answer, byte for byte", func() {
		r := rand.New(rand.NewPCG(21, 6))
		for range 5000 {
			a := account(r)
			got, want := httptest.NewRecorder(), httptest.NewRecorder()
			Expect(accountAnswer(a).VisitGetAccountResponse(got)).To(Succeed())
			Expect(gen.GetAccount200JSONResponse(a).VisitGetAccountResponse(want)).To(Succeed())
			Expect(got.Code).To(Equal(want.Code))
			Expect(got.Header()).To(Equal(want.Header()))
			Expect(got.Body.String()).To(Equal(want.Body.String()))
		}
	})

	It("writes every field of the account's types (a new field must be added to appendAccountJSON)", func() {
		for t, fields := range map[reflect.Type]int{reflect.TypeFor[gen.Account](): 6, reflect.TypeFor[gen.Organization](): 14,
			reflect.TypeFor[gen.OrganizationAddress](): 7, reflect.TypeFor[gen.OrganizationContact](): 6,
			reflect.TypeFor[gen.QuietHours](): 3} {
			Expect(t.NumField()).To(Equal(fields), "%s", t)
		}
	})
})

// BenchmarkAccountAnswer writes GET /accounts/{id}'s 200 for an account with a brand, a time
// zone and an organization's name, as accountAnswer and as the generated code does.
func BenchmarkAccountAnswer(b *testing.B) {
	brand, tz, name := "Acme Dental", "America/New_York", "Acme Dental LLC"
	a := gen.Account{BrandName: &brand, Id: "acct_01jtp4dsdq6de56aa0tfm2e5b3", Name: "Acme", TimeZone: &tz,
		Organization: gen.Organization{RegisteredName: &name}, QuietHours: gen.QuietHours{Start: "08:00", End: "21:00"}}
	w := httptest.NewRecorder()
	b.Run("accountAnswer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.Body.Reset()
			clear(w.Header())
			_ = accountAnswer(a).VisitGetAccountResponse(w)
		}
	})
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.Body.Reset()
			clear(w.Header())
			_ = gen.GetAccount200JSONResponse(a).VisitGetAccountResponse(w)
		}
	})
}
