package sim

// AreaCodeCountries is the country each located area code is filed under, for specs.
func AreaCodeCountries() map[string]string {
	out := map[string]string{}
	for code, p := range areaCodePlaces {
		out[code] = p.Country
	}
	return out
}

// AreaCodeCountry is areaCodeCountry, for specs.
var AreaCodeCountry = areaCodeCountry
