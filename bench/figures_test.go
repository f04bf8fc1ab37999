package bench

import (
	"testing"
	"time"
)

func TestFiguresRecordValuesAndReasons(t *testing.T) {
	f := NewFigures()
	f.NotMeasured("x", "not installed")
	if _, ok := f.Get("x"); ok || f.Why("x") != "not installed" {
		t.Fatalf("x: reason %q", f.Why("x"))
	}
	f.SetDuration("x", 3*time.Millisecond)
	if v, ok := f.Get("x"); !ok || v != float64(3*time.Millisecond) || f.Why("x") != "" {
		t.Fatalf("x = %v, %v, reason %q after Set", v, ok, f.Why("x"))
	}
	f.NotMeasured("x", "late") // a measured figure keeps its value
	if _, ok := f.Get("x"); !ok || f.Why("x") != "" {
		t.Fatal("NotMeasured overrode a measured figure")
	}
	var none *Figures
	none.Set("y", 1)
	none.NotMeasured("y", "z")
	if _, ok := none.Get("y"); ok || none.Why("y") != "" {
		t.Fatal("a nil record found something")
	}
}
