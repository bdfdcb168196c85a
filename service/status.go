package service

import "strings"

// Organization is the part of an account's legal entity that carrier registration reads. It is
// decoded from the account's stored organization JSON.
type Organization struct {
	Address *struct {
		Country    *string `json:"country"`
		Line1      *string `json:"line1"`
		Locality   *string `json:"locality"`
		Name       *string `json:"name"`
		PostalCode *string `json:"postal_code"`
		Region     *string `json:"region"`
	} `json:"address"`
	Contact *struct {
		Email       *string `json:"email"`
		FirstName   *string `json:"first_name"`
		LastName    *string `json:"last_name"`
		PhoneNumber *string `json:"phone_number"`
		Title       *string `json:"title"`
		TitleOther  *string `json:"title_other"`
	} `json:"contact"`
	Country            *string   `json:"country"`
	Email              *string   `json:"email"`
	Identifier         *string   `json:"identifier"`
	IdentifierType     *string   `json:"identifier_type"`
	Industry           *string   `json:"industry"`
	MobileNumber       *string   `json:"mobile_number"`
	RegionsOfOperation *[]string `json:"regions_of_operation"`
	RegisteredName     *string   `json:"registered_name"`
	StockExchange      *string   `json:"stock_exchange"`
	StockSymbol        *string   `json:"stock_symbol"`
	Type               *string   `json:"type"`
	Website            *string   `json:"website"`
}

// Registration is what an account has registered with the carriers for local messaging.
type Registration struct {
	// ActiveCampaign is true when the account has an active 10DLC campaign.
	ActiveCampaign bool
	// AttachedNumber is true when a local number is attached to that campaign.
	AttachedNumber bool
}

// StatusError is one reason a capability is not ready.
type StatusError struct {
	Field, Message, Type string
}

// CapabilityStatus is the readiness of one capability of an account.
type CapabilityStatus struct {
	// Status is "ready", "incomplete" or "error".
	Status string
	// FieldsNeeded lists missing organization fields by dotted path.
	FieldsNeeded []string
	Errors       []StatusError
}

// LocalMessagingStatus says whether an account can send local (10DLC) messages: its organization
// must have every field brand registration needs, and it must have an active campaign with an
// attached number.
func LocalMessagingStatus(archived bool, org Organization, reg Registration) CapabilityStatus {
	need := []string{}
	check := func(path string, v *string) {
		if v == nil || strings.TrimSpace(*v) == "" {
			need = append(need, path)
		}
	}
	var addr = org.Address
	if addr == nil {
		need = append(need, "organization.address")
	} else {
		check("organization.address.country", addr.Country)
		check("organization.address.line1", addr.Line1)
		check("organization.address.locality", addr.Locality)
		check("organization.address.postal_code", addr.PostalCode)
		check("organization.address.region", addr.Region)
	}
	if ct := org.Contact; ct == nil {
		need = append(need, "organization.contact")
	} else {
		check("organization.contact.email", ct.Email)
		check("organization.contact.first_name", ct.FirstName)
		check("organization.contact.last_name", ct.LastName)
		check("organization.contact.phone_number", ct.PhoneNumber)
		check("organization.contact.title", ct.Title)
	}
	check("organization.country", org.Country)
	check("organization.email", org.Email)
	check("organization.identifier", org.Identifier)
	check("organization.identifier_type", org.IdentifierType)
	check("organization.industry", org.Industry)
	check("organization.registered_name", org.RegisteredName)
	check("organization.type", org.Type)
	check("organization.website", org.Website)
	if org.RegionsOfOperation == nil || len(*org.RegionsOfOperation) == 0 {
		need = append(need, "organization.regions_of_operation")
	}
	if org.Type != nil && *org.Type == "public_corporation" {
		check("organization.stock_exchange", org.StockExchange)
		check("organization.stock_symbol", org.StockSymbol)
	}

	// Missing fields leave the capability incomplete; a listed error (a registration step not
	// taken, an archived account) makes it error, which wins over incomplete as Surge's
	// AccountStatus has it.
	st := CapabilityStatus{Status: "ready", FieldsNeeded: need, Errors: []StatusError{}}
	if !reg.ActiveCampaign {
		st.Errors = append(st.Errors, StatusError{Field: "campaign", Type: "campaign_required", Message: "the account has no active campaign"})
	} else if !reg.AttachedNumber {
		st.Errors = append(st.Errors, StatusError{Field: "phone_number", Type: "campaign_required", Message: "no local number is attached to the active campaign"})
	}
	if archived {
		st.Errors = append(st.Errors, StatusError{Field: "account", Type: TypeAccountArchived, Message: "the account is archived"})
	}
	switch {
	case len(st.Errors) > 0:
		st.Status = "error"
	case len(need) > 0:
		st.Status = "incomplete"
	}
	return st
}
