package runcode

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/isogate/isogate/config"
)

// openMeteo is a local server speaking Open-Meteo's forecast API.
type openMeteo struct {
	*httptest.Server
	mu      sync.Mutex
	queries []url.Values
}

func newOpenMeteo(t *testing.T) *openMeteo {
	s := &openMeteo{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s.mu.Lock()
		s.queries = append(s.queries, q)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/v1/forecast" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":true,"reason":"Not Found"}`))
			return
		}
		if q.Get("latitude") == "-89.5" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":true,"reason":"Cannot initialize WeatherVariable from invalid String value"}`))
			return
		}
		fmt.Fprintf(w, `{"latitude":%s,"longitude":%s,"generationtime_ms":0.05,"utc_offset_seconds":0,"timezone":"GMT",
			"timezone_abbreviation":"GMT","elevation":38.0,
			"current_units":{"time":"iso8601","interval":"seconds","temperature_2m":"°C","wind_speed_10m":"km/h","weather_code":"wmo code"},
			"current":{"time":"2025-01-02T12:00","interval":900,"temperature_2m":7.4,"wind_speed_10m":13.1,"weather_code":3}}`,
			q.Get("latitude"), q.Get("longitude"))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *openMeteo) lastQuery() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queries) == 0 {
		return nil
	}
	return s.queries[len(s.queries)-1]
}

func weatherRunner(t *testing.T, base string) *Service {
	t.Helper()
	return newRunner(t, config.RunCodeConfig{Weather: config.WeatherConfig{Enabled: true, BaseURL: base}})
}

const wantWeather = `{"conditions":"Overcast","latitude":52.52,"longitude":13.41,"temperature":7.4,"time":"2025-01-02T12:00",` +
	`"units":{"temperature":"°C","wind_speed":"km/h"},"weather_code":3,"wind_speed":13.1}`

func TestWeather_Coordinates(t *testing.T) {
	srv := newOpenMeteo(t)
	r := weatherRunner(t, srv.URL+"/")
	got := mustOK(t, r, Input{Code: `return await api.getWeather({latitude: 52.52, longitude: 13.41})`})
	if compact(t, got) != wantWeather {
		t.Fatalf("weather = %s\nwant %s", got, wantWeather)
	}
	q := srv.lastQuery()
	if q.Get("latitude") != "52.52" || q.Get("longitude") != "13.41" ||
		q.Get("current") != "temperature_2m,wind_speed_10m,weather_code" {
		t.Fatalf("query = %v", q)
	}
}

func TestWeather_Hints(t *testing.T) {
	srv := newOpenMeteo(t)
	r := weatherRunner(t, srv.URL)
	for _, hints := range []map[string]any{
		{"location": map[string]any{"latitude": 52.52, "longitude": 13.41}},
		{"latitude": 52.52, "longitude": 13.41}, // flat form
	} {
		got := mustOK(t, r, Input{Code: `return await api.getWeather()`, Hints: hints})
		if compact(t, got) != wantWeather {
			t.Fatalf("hints %v: weather = %s", hints, got)
		}
	}
	// Explicit coordinates win over the hint.
	mustOK(t, r, Input{Code: `return await api.getWeather({latitude: 1, longitude: 2})`,
		Hints: map[string]any{"location": map[string]any{"latitude": 52.52, "longitude": 13.41}}})
	if q := srv.lastQuery(); q.Get("latitude") != "1" || q.Get("longitude") != "2" {
		t.Fatalf("query = %v", q)
	}
	// No argument and no hint.
	out := r.Run(context.Background(), Input{Code: `return await api.getWeather()`})
	wantError(t, out, VMError, "api.getWeather: pass {latitude, longitude}: no location hint was given")
}

func TestWeather_Errors(t *testing.T) {
	srv := newOpenMeteo(t)
	r := weatherRunner(t, srv.URL)
	cases := []struct{ code, want string }{
		{`return await api.getWeather({latitude: 91, longitude: 0})`, "argument 1"},
		{`return await api.getWeather({latitude: 10})`, "argument 1"},
		{`return await api.getWeather("Berlin")`, "argument 1"},
		{`return await api.getWeather({latitude: -89.5, longitude: 0})`,
			"weather service: Cannot initialize WeatherVariable from invalid String value (HTTP 400)"},
	}
	for _, c := range cases {
		wantError(t, r.Run(context.Background(), Input{Code: c.code}), VMError, c.want)
	}
	out := r.Run(context.Background(), Input{Code: `return await api.getWeather()`,
		Hints: map[string]any{"location": "Berlin"}})
	wantError(t, out, VMError, `hint "location"`)
	// A base URL without the API.
	r = weatherRunner(t, srv.URL+"/elsewhere")
	wantError(t, r.Run(context.Background(), Input{Code: `return await api.getWeather({latitude: 1, longitude: 1})`}),
		VMError, "weather service: Not Found (HTTP 404)")
}

func TestWeather_Metadata(t *testing.T) {
	r := weatherRunner(t, "https://weather.invalid")
	d := r.Description()
	if !strings.Contains(d, "- api.getWeather({latitude, longitude}) -> {latitude, longitude, time, temperature") ||
		!strings.Contains(d, "hints.location") {
		t.Fatalf("description:\n%s", d)
	}
	out := r.Run(context.Background(), Input{Code: `return Object.keys(api)`})
	if string(out.Result) != `["getWeather"]` || len(out.Environment.APIs) != 1 {
		t.Fatalf("out = %s %+v", out.Result, out.Environment.APIs)
	}
	var info map[string]string
	b, _ := json.Marshal(out.Environment.APIs[0])
	json.Unmarshal(b, &info)
	for _, k := range []string{"name", "signature", "description", "returns"} {
		if info[k] == "" {
			t.Errorf("environment.apis[0].%s is empty: %s", k, b)
		}
	}
	if !r.Tool().Annotations.ReadOnlyHint {
		t.Error("weather-only tool is not read-only")
	}
}
