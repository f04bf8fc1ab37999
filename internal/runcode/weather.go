package runcode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/isogate/isogate/config"
)

// WeatherAPI returns api.getWeather, which asks an Open-Meteo compatible
// service at cfg.BaseURL for the current weather. Called without arguments
// it uses the run's "location" hint. client should bound each request; the
// run's deadline bounds it in any case.
func WeatherAPI(cfg config.WeatherConfig, client *http.Client) API {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = config.DefaultWeatherBaseURL
	}
	w := &weather{base: base, client: client}
	return API{
		Name:      "getWeather",
		Signature: "api.getWeather({latitude, longitude})",
		Description: "Current weather at a location, from Open-Meteo. Without arguments it uses the location " +
			"given in hints.location, if any.",
		ReturnType: "{latitude, longitude, time, temperature, wind_speed, weather_code, conditions, units: {temperature, wind_speed}}",
		ReadOnly:   true,
		Params:     weatherParams,
		Hints:      []string{"location"},
		Handler:    w.handle,
	}
}

var coordinates = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"latitude":  {Type: "number", Minimum: jsonschema.Ptr(-90.0), Maximum: jsonschema.Ptr(90.0)},
		"longitude": {Type: "number", Minimum: jsonschema.Ptr(-180.0), Maximum: jsonschema.Ptr(180.0)},
	},
	Required: []string{"latitude", "longitude"},
}

var weatherParams = &jsonschema.Schema{
	Type:        "array",
	PrefixItems: []*jsonschema.Schema{{AnyOf: []*jsonschema.Schema{{Type: "null"}, coordinates}}},
	MaxItems:    jsonschema.Ptr(1),
}

type weather struct {
	base   string
	client *http.Client
}

type location struct {
	Latitude  *float64 `json:"latitude"`
	Longitude *float64 `json:"longitude"`
}

// openMeteoResponse is the part of Open-Meteo's forecast response we use.
type openMeteoResponse struct {
	Latitude     float64           `json:"latitude"`
	Longitude    float64           `json:"longitude"`
	CurrentUnits map[string]string `json:"current_units"`
	Current      *struct {
		Time          string   `json:"time"`
		Temperature2m *float64 `json:"temperature_2m"`
		WindSpeed10m  *float64 `json:"wind_speed_10m"`
		WeatherCode   *int     `json:"weather_code"`
	} `json:"current"`
	Error  bool   `json:"error"`
	Reason string `json:"reason"`
}

// Weather is what api.getWeather returns.
type Weather struct {
	Latitude    float64      `json:"latitude"`
	Longitude   float64      `json:"longitude"`
	Time        string       `json:"time"`
	Temperature *float64     `json:"temperature"`
	WindSpeed   *float64     `json:"wind_speed"`
	WeatherCode *int         `json:"weather_code"`
	Conditions  string       `json:"conditions,omitempty"`
	Units       WeatherUnits `json:"units"`
}

// WeatherUnits are the units of [Weather]'s measurements.
type WeatherUnits struct {
	Temperature string `json:"temperature"`
	WindSpeed   string `json:"wind_speed"`
}

func (w *weather) handle(ctx context.Context, call Call) (any, error) {
	var loc location
	given, err := call.Arg(0, &loc)
	if err != nil {
		return nil, err
	}
	if !given {
		hinted, err := call.Hint("location", &loc)
		if err != nil {
			return nil, err
		}
		if !hinted {
			return nil, errors.New("pass {latitude, longitude}: no location hint was given")
		}
	}
	if loc.Latitude == nil || loc.Longitude == nil || *loc.Latitude < -90 || *loc.Latitude > 90 ||
		*loc.Longitude < -180 || *loc.Longitude > 180 {
		return nil, errors.New("latitude must be in [-90, 90] and longitude in [-180, 180]")
	}
	q := url.Values{}
	q.Set("latitude", strconv.FormatFloat(*loc.Latitude, 'f', -1, 64))
	q.Set("longitude", strconv.FormatFloat(*loc.Longitude, 'f', -1, 64))
	q.Set("current", "temperature_2m,wind_speed_10m,weather_code")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.base+"/v1/forecast?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "isogate-run-code")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("weather service: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxFetchBytes+1))
	if err != nil {
		return nil, fmt.Errorf("weather service: %v", err)
	}
	if len(data) > MaxFetchBytes {
		return nil, errors.New("weather service: response too large")
	}
	var r openMeteoResponse
	jsonErr := json.Unmarshal(data, &r)
	if resp.StatusCode != http.StatusOK || r.Error {
		reason := r.Reason
		if reason == "" {
			reason = http.StatusText(resp.StatusCode)
		}
		return nil, fmt.Errorf("weather service: %s (HTTP %d)", reason, resp.StatusCode)
	}
	if jsonErr != nil || r.Current == nil {
		return nil, errors.New("weather service: unexpected response (no current weather)")
	}
	out := Weather{
		Latitude:    r.Latitude,
		Longitude:   r.Longitude,
		Time:        r.Current.Time,
		Temperature: r.Current.Temperature2m,
		WindSpeed:   r.Current.WindSpeed10m,
		WeatherCode: r.Current.WeatherCode,
		Units: WeatherUnits{
			Temperature: r.CurrentUnits["temperature_2m"],
			WindSpeed:   r.CurrentUnits["wind_speed_10m"],
		},
	}
	if out.WeatherCode != nil {
		out.Conditions = wmoConditions[*out.WeatherCode]
	}
	return out, nil
}

// wmoConditions names the WMO weather interpretation codes Open-Meteo uses.
var wmoConditions = map[int]string{
	0: "Clear sky", 1: "Mainly clear", 2: "Partly cloudy", 3: "Overcast",
	45: "Fog", 48: "Depositing rime fog",
	51: "Light drizzle", 53: "Moderate drizzle", 55: "Dense drizzle",
	56: "Light freezing drizzle", 57: "Dense freezing drizzle",
	61: "Slight rain", 63: "Moderate rain", 65: "Heavy rain",
	66: "Light freezing rain", 67: "Heavy freezing rain",
	71: "Slight snowfall", 73: "Moderate snowfall", 75: "Heavy snowfall", 77: "Snow grains",
	80: "Slight rain showers", 81: "Moderate rain showers", 82: "Violent rain showers",
	85: "Slight snow showers", 86: "Heavy snow showers",
	95: "Thunderstorm", 96: "Thunderstorm with slight hail", 99: "Thunderstorm with heavy hail",
}
