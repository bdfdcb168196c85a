package server_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service"
)

// userTokenClaims are the claims of a user token as a client decodes them.
type userTokenClaims struct {
	jwt.RegisteredClaims
	Account string `json:"acct"`
}

// jwksKeys fetches /.well-known/jwks.json, without an API key, as kid → Ed25519 public key.
func jwksKeys() map[string]ed25519.PublicKey {
	r := (&tenant{api: api}).get("/.well-known/jwks.json")
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusOK), r.String())
	var set struct {
		Keys []struct {
			Kty, Crv, X, Kid, Alg, Use string
		} `json:"keys"`
	}
	r.Into(&set)
	ExpectWithOffset(1, set.Keys).NotTo(BeEmpty())
	out := map[string]ed25519.PublicKey{}
	for _, k := range set.Keys {
		ExpectWithOffset(1, k.Kty).To(Equal("OKP"))
		ExpectWithOffset(1, k.Crv).To(Equal("Ed25519"))
		ExpectWithOffset(1, k.Alg).To(Equal("EdDSA"))
		ExpectWithOffset(1, k.Use).To(Equal("sig"))
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "x is unpadded base64url")
		ExpectWithOffset(1, x).To(HaveLen(ed25519.PublicKeySize))
		out[k.Kid] = ed25519.PublicKey(x)
	}
	return out
}

// parseUserToken verifies a token's signature against the published JWKS (key chosen by the
// header's kid, alg EdDSA only) and its issuer and expiry, and returns its claims.
func parseUserToken(raw string) *userTokenClaims {
	keys := jwksKeys()
	var claims userTokenClaims
	tok, err := jwt.ParseWithClaims(raw, &claims, func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		if k, ok := keys[kid]; ok {
			return k, nil
		}
		return nil, errors.New("kid " + kid + " is not in the JWKS")
	}, jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithIssuer("https://switchboard.test"),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(clock.Now))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, tok.Valid).To(BeTrue())
	return &claims
}

// issueToken asks the API for a token for a user and returns it.
func (t *tenant) issueToken(userID string, body any) string {
	r := t.post("/users/"+userID+"/tokens", body)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
	var out map[string]any
	r.Into(&out)
	ExpectWithOffset(1, out).To(HaveLen(1), "the response is {token}")
	tok, ok := out["token"].(string)
	ExpectWithOffset(1, ok).To(BeTrue(), "token is a string")
	return tok
}

// lifetime is a token's exp minus iat.
func lifetime(c *userTokenClaims) time.Duration { return c.ExpiresAt.Sub(c.IssuedAt.Time) }

var _ = Describe("User tokens", func() {
	var (
		t          *tenant
		acct, user string
	)
	BeforeEach(func() {
		t = newTenant()
		acct = t.createAccount("Acme Dental")
		user = t.createUserIn(acct, map[string]any{"first_name": "Brian"})["id"].(string)
	})

	Describe("POST /users/{user_id}/tokens", func() {
		It("answers 201 with a signed token valid for the requested duration", func() {
			c := parseUserToken(t.issueToken(user, map[string]any{"duration_seconds": 60}))
			Expect(lifetime(c)).To(Equal(60 * time.Second))
		})

		It("makes tokens valid for 900 seconds by default, without a body", func() {
			Expect(lifetime(parseUserToken(t.issueToken(user, nil)))).To(Equal(900 * time.Second))
		})

		It("makes tokens valid for 900 seconds by default, with an empty body", func() {
			Expect(lifetime(parseUserToken(t.issueToken(user, map[string]any{})))).To(Equal(900 * time.Second))
		})

		DescribeTable("accepts duration_seconds from 15 to 3600 and refuses the rest",
			func(duration any, accepted bool) {
				r := t.post("/users/"+user+"/tokens", map[string]any{"duration_seconds": duration})
				if !accepted {
					Expect(r).To(HaveFieldError("duration_seconds"), r.String())
					return
				}
				Expect(r).To(HaveStatus(http.StatusCreated), r.String())
				c := parseUserToken(r.JSON()["token"].(string))
				Expect(lifetime(c)).To(Equal(time.Duration(duration.(int)) * time.Second))
			},
			Entry("14: below the minimum", 14, false),
			Entry("15: the minimum", 15, true),
			Entry("900: the default", 900, true),
			Entry("3600: the maximum", 3600, true),
			Entry("3601: above the maximum", 3601, false),
			Entry("0", 0, false),
			Entry("negative", -60, false),
			Entry("a fraction", 60.5, false),
			Entry("a string", "60", false),
		)

		It("refuses unknown body fields with 422", func() {
			r := t.post("/users/"+user+"/tokens", map[string]any{"duration_seconds": 60, "scope": "inbox"})
			Expect(r).To(HaveFieldError("scope"))
		})

		It("answers 400 invalid_json to a body that is not JSON", func() {
			Expect(t.post("/users/"+user+"/tokens", "{duration_seconds:60}")).To(HaveError(http.StatusBadRequest, "invalid_json"))
		})

		It("returns 404 for a user that does not exist", func() {
			Expect(t.post("/users/usr_01jg6m3tw0h228qsrxmvs8m9w2/tokens", nil)).To(HaveError(http.StatusNotFound, "not_found"))
		})

		It("returns 404 for another project's user", func() {
			other := newTenant()
			theirs := other.createUserIn(other.createAccount("Theirs"), map[string]any{"first_name": "Secret"})["id"].(string)
			Expect(t.post("/users/"+theirs+"/tokens", nil)).To(HaveError(http.StatusNotFound, "not_found"))
		})
	})

	Describe("claims", func() {
		It("carries iss, sub, acct, iat, exp = iat + duration and a jti, signed with a published key", func() {
			before := clock.Now().Truncate(time.Second)
			raw := t.issueToken(user, map[string]any{"duration_seconds": 120})
			after := clock.Now()

			header, _, _ := strings.Cut(raw, ".")
			var h map[string]any
			b, err := base64.RawURLEncoding.DecodeString(header)
			Expect(err).NotTo(HaveOccurred())
			Expect(json.Unmarshal(b, &h)).To(Succeed())
			Expect(h).To(HaveKeyWithValue("alg", "EdDSA"))
			Expect(h).To(HaveKeyWithValue("kid", Not(BeEmpty())))
			Expect(jwksKeys()).To(HaveKey(h["kid"]))

			c := parseUserToken(raw)
			Expect(c.Issuer).To(Equal("https://switchboard.test"))
			Expect(c.Subject).To(Equal(user))
			Expect(c.Account).To(Equal(acct))
			Expect(c.IssuedAt).NotTo(BeNil())
			Expect(c.IssuedAt.Time).To(BeTemporally(">=", before))
			Expect(c.IssuedAt.Time).To(BeTemporally("<=", after))
			Expect(c.ExpiresAt.Time).To(Equal(c.IssuedAt.Add(120 * time.Second)))
			Expect(c.ID).NotTo(BeEmpty())
		})

		It("gives every token its own jti", func() {
			a := parseUserToken(t.issueToken(user, nil))
			b := parseUserToken(t.issueToken(user, nil))
			Expect(a.ID).NotTo(BeEmpty())
			Expect(a.ID).NotTo(Equal(b.ID))
		})

		It("does not verify with a key that is not published", func() {
			raw := t.issueToken(user, nil)
			stranger, _, err := ed25519.GenerateKey(rand.Reader)
			Expect(err).NotTo(HaveOccurred())
			_, err = jwt.Parse(raw, func(*jwt.Token) (any, error) { return stranger, nil }, jwt.WithValidMethods([]string{"EdDSA"}))
			Expect(err).To(MatchError(jwt.ErrTokenSignatureInvalid))
		})
	})

	Describe("verification by the token service", func() {
		ctx := context.Background()

		It("accepts a fresh token and returns its claims", func() {
			c, err := tokens.Verify(ctx, t.issueToken(user, nil))
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Subject).To(Equal(user))
			Expect(c.Account).To(Equal(acct))
		})

		It("refuses the tokens of a user once the user is deleted", func() {
			raw := t.issueToken(user, nil)
			Expect(t.delete("/users/" + user)).To(HaveStatus(http.StatusOK))
			_, err := tokens.Verify(ctx, raw)
			Expect(err).To(MatchError(service.ErrTokenInvalid))
		})

		It("keeps accepting a token until it expires, then refuses it", func() {
			raw := t.issueToken(user, map[string]any{"duration_seconds": 15})
			clock.Advance(13 * time.Second)
			_, err := tokens.Verify(ctx, raw)
			Expect(err).NotTo(HaveOccurred(), "13 s into a 15 s token")
			clock.Advance(3 * time.Second)
			_, err = tokens.Verify(ctx, raw)
			Expect(err).To(MatchError(service.ErrTokenInvalid), "16 s into a 15 s token")
		})

		It("refuses a token past its default 900 seconds", func() {
			raw := t.issueToken(user, nil)
			clock.Advance(901 * time.Second)
			_, err := tokens.Verify(ctx, raw)
			Expect(err).To(MatchError(service.ErrTokenInvalid))
		})

		DescribeTable("refuses a tampered token",
			func(tamper func(header, payload, sig string) string) {
				raw := t.issueToken(user, nil)
				parts := strings.Split(raw, ".")
				Expect(parts).To(HaveLen(3))
				_, err := tokens.Verify(ctx, tamper(parts[0], parts[1], parts[2]))
				Expect(err).To(MatchError(service.ErrTokenInvalid))
			},
			Entry("a claim changed (sub of another user)", func(h, p, s string) string {
				return h + "." + rewriteClaims(p, func(m map[string]any) { m["sub"] = "usr_01jg6m3tw0h228qsrxmvs8m9w2" }) + "." + s
			}),
			Entry("exp pushed a day later", func(h, p, s string) string {
				return h + "." + rewriteClaims(p, func(m map[string]any) { m["exp"] = m["exp"].(float64) + 86400 }) + "." + s
			}),
			Entry("a flipped signature byte", func(h, p, s string) string {
				sig, err := base64.RawURLEncoding.DecodeString(s)
				Expect(err).NotTo(HaveOccurred())
				sig[0] ^= 0xff
				return h + "." + p + "." + base64.RawURLEncoding.EncodeToString(sig)
			}),
			Entry("the signature removed", func(h, p, _ string) string { return h + "." + p + "." }),
			Entry("alg none", func(_, p, _ string) string {
				return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + p + "."
			}),
			Entry("signed with another Ed25519 key under the same kid", func(h, p, _ string) string {
				_, key, err := ed25519.GenerateKey(rand.Reader)
				Expect(err).NotTo(HaveOccurred())
				sig := ed25519.Sign(key, []byte(h+"."+p))
				return h + "." + p + "." + base64.RawURLEncoding.EncodeToString(sig)
			}),
			Entry("not a JWT at all", func(_, _, _ string) string { return "not-a-token" }),
		)

		It("refuses a correctly signed token of another issuer", func() {
			foreign, err := service.NewTokens(st, "https://elsewhere.test", clock.Now)
			Expect(err).NotTo(HaveOccurred())
			raw, err := foreign.Issue(ctx, user, acct, 60)
			Expect(err).NotTo(HaveOccurred())
			_, err = tokens.Verify(ctx, raw)
			Expect(err).To(MatchError(service.ErrTokenInvalid))
		})
	})
})

// rewriteClaims decodes a JWT payload segment, lets change edit it, and encodes it again.
func rewriteClaims(payload string, change func(map[string]any)) string {
	b, err := base64.RawURLEncoding.DecodeString(payload)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var m map[string]any
	ExpectWithOffset(1, json.Unmarshal(b, &m)).To(Succeed())
	change(m)
	out, err := json.Marshal(m)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return base64.RawURLEncoding.EncodeToString(out)
}
