package service

import (
	"encoding/json"
	"strings"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/store"
)

// brandOf is the account's brand as the carriers' registries take it, from the account's name,
// brand name and organization (fields the account has not given stay empty).
func brandOf(a *store.Account) carriers.Brand {
	var org struct {
		Address struct {
			Country, Line1, Line2, Locality, Name, Region string
			PostalCode                                    string `json:"postal_code"`
		} `json:"address"`
		Contact struct {
			Email, Title string
			FirstName    string `json:"first_name"`
			LastName     string `json:"last_name"`
			PhoneNumber  string `json:"phone_number"`
			TitleOther   string `json:"title_other"`
		} `json:"contact"`
		Country, Email, Identifier, Industry, Type, Website string
		IdentifierType                                      string   `json:"identifier_type"`
		MobileNumber                                        string   `json:"mobile_number"`
		RegionsOfOperation                                  []string `json:"regions_of_operation"`
		RegisteredName                                      string   `json:"registered_name"`
		StockExchange                                       string   `json:"stock_exchange"`
		StockSymbol                                         string   `json:"stock_symbol"`
	}
	_ = json.Unmarshal([]byte(a.Organization), &org) // written by the API from the contract's schema; nulls stay empty
	b := carriers.Brand{
		Name: a.Name, RegisteredName: org.RegisteredName, Type: org.Type, Industry: org.Industry, Website: org.Website,
		Email: org.Email, MobileNumber: org.MobileNumber, Identifier: org.Identifier, IdentifierType: org.IdentifierType,
		Country: org.Country, RegionsOfOperation: org.RegionsOfOperation, StockExchange: org.StockExchange, StockSymbol: org.StockSymbol,
		Address: carriers.BrandAddress{Name: org.Address.Name, Line1: org.Address.Line1, Line2: org.Address.Line2,
			Locality: org.Address.Locality, Region: org.Address.Region, PostalCode: org.Address.PostalCode, Country: org.Address.Country},
		Contact: carriers.BrandContact{FirstName: org.Contact.FirstName, LastName: org.Contact.LastName, Email: org.Contact.Email,
			PhoneNumber: org.Contact.PhoneNumber, Title: org.Contact.Title, TitleOther: org.Contact.TitleOther},
	}
	if a.BrandName != nil && *a.BrandName != "" {
		b.Name = *a.BrandName
	}
	return b
}

// keywordReplies are the core's answers to START, STOP and HELP for a brand, as registries ask
// for them.
func keywordReplies(brand string) (optIn, optOut, help string) {
	r := func(tmpl string) string { return strings.Replace(tmpl, "%s", brand, 1) }
	return r(replyOptIn), r(replyOptOut), r(replyHelp)
}
