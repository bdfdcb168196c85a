package sim

import (
	"math"
	"slices"
)

// areaCodePlaces locates the area codes the simulator can search near a place: the main city of
// each, in decimal degrees. It covers the large cities and every state and province, not the
// whole numbering plan; a search near a place offers these area codes nearest first.
var areaCodePlaces = map[string]struct {
	Country string
	Lat     float64
	Lon     float64
}{
	// United States.
	"201": {"US", 40.73, -74.07}, "202": {"US", 38.91, -77.04}, "205": {"US", 33.52, -86.80},
	"206": {"US", 47.61, -122.33}, "207": {"US", 43.66, -70.26}, "208": {"US", 43.62, -116.20},
	"210": {"US", 29.42, -98.49}, "212": {"US", 40.71, -74.01}, "213": {"US", 34.05, -118.24},
	"214": {"US", 32.78, -96.80}, "215": {"US", 39.95, -75.17}, "216": {"US", 41.50, -81.69},
	"302": {"US", 39.74, -75.55}, "303": {"US", 39.74, -104.99}, "304": {"US", 38.35, -81.63},
	"305": {"US", 25.76, -80.19}, "307": {"US", 41.14, -104.82}, "310": {"US", 34.02, -118.49},
	"312": {"US", 41.88, -87.63}, "313": {"US", 42.33, -83.05}, "314": {"US", 38.63, -90.20},
	"316": {"US", 37.69, -97.34}, "317": {"US", 39.77, -86.16}, "401": {"US", 41.82, -71.41},
	"402": {"US", 41.26, -95.93}, "404": {"US", 33.75, -84.39}, "405": {"US", 35.47, -97.52},
	"406": {"US", 45.78, -108.50}, "407": {"US", 28.54, -81.38}, "408": {"US", 37.34, -121.89},
	"410": {"US", 39.29, -76.61}, "412": {"US", 40.44, -79.99}, "414": {"US", 43.04, -87.91},
	"415": {"US", 37.77, -122.42}, "501": {"US", 34.75, -92.29}, "502": {"US", 38.25, -85.76},
	"503": {"US", 45.52, -122.68}, "504": {"US", 29.95, -90.07}, "505": {"US", 35.08, -106.65},
	"510": {"US", 37.80, -122.27}, "512": {"US", 30.27, -97.74}, "515": {"US", 41.59, -93.62},
	"518": {"US", 42.65, -73.75}, "520": {"US", 32.22, -110.97}, "559": {"US", 36.74, -119.79},
	"601": {"US", 32.30, -90.18}, "602": {"US", 33.45, -112.07}, "603": {"US", 42.99, -71.46},
	"605": {"US", 43.54, -96.73}, "612": {"US", 44.98, -93.27}, "614": {"US", 39.96, -83.00},
	"615": {"US", 36.16, -86.78}, "617": {"US", 42.36, -71.06}, "619": {"US", 32.72, -117.16},
	"701": {"US", 46.88, -96.79}, "702": {"US", 36.17, -115.14}, "704": {"US", 35.23, -80.84},
	"713": {"US", 29.76, -95.37}, "716": {"US", 42.89, -78.88}, "775": {"US", 39.53, -119.81},
	"801": {"US", 40.76, -111.89}, "802": {"US", 44.48, -73.21}, "803": {"US", 34.00, -81.03},
	"808": {"US", 21.31, -157.86}, "813": {"US", 27.95, -82.46}, "816": {"US", 39.10, -94.58},
	"860": {"US", 41.76, -72.69}, "901": {"US", 35.15, -90.05}, "904": {"US", 30.33, -81.66},
	"907": {"US", 61.22, -149.90}, "916": {"US", 38.58, -121.49}, "919": {"US", 35.78, -78.64},
	// Canada.
	"204": {"CA", 49.90, -97.14}, "250": {"CA", 48.43, -123.37}, "306": {"CA", 50.45, -104.61},
	"403": {"CA", 51.05, -114.07}, "416": {"CA", 43.65, -79.38}, "418": {"CA", 46.81, -71.21},
	"506": {"CA", 46.09, -64.78}, "514": {"CA", 45.50, -73.57}, "519": {"CA", 42.98, -81.25},
	"604": {"CA", 49.28, -123.12}, "613": {"CA", 45.42, -75.70}, "705": {"CA", 46.49, -80.99},
	"709": {"CA", 47.56, -52.71}, "780": {"CA", 53.55, -113.49}, "807": {"CA", 48.38, -89.25},
	"867": {"CA", 60.72, -135.06}, "902": {"CA", 44.65, -63.57},
}

// nearestAreaCodes lists the located area codes of country (either country when empty), nearest
// to (lat, lon) first.
func nearestAreaCodes(country string, lat, lon float64) []string {
	type ranked struct {
		code string
		km   float64
	}
	var all []ranked
	for code, p := range areaCodePlaces {
		if country == "" || p.Country == country {
			all = append(all, ranked{code, distanceKM(lat, lon, p.Lat, p.Lon)})
		}
	}
	slices.SortFunc(all, func(a, b ranked) int {
		if a.km != b.km {
			if a.km < b.km {
				return -1
			}
			return 1
		}
		if a.code < b.code {
			return -1
		}
		return 1
	})
	out := make([]string, len(all))
	for i, r := range all {
		out[i] = r.code
	}
	return out
}

// distanceKM is the great-circle distance between two points (haversine).
func distanceKM(lat1, lon1, lat2, lon2 float64) float64 {
	const earthRadiusKM = 6371
	rad := math.Pi / 180
	dLat, dLon := (lat2-lat1)*rad, (lon2-lon1)*rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadiusKM * math.Asin(math.Sqrt(a))
}
