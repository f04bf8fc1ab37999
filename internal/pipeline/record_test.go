package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBlobKeepsSmallValuesAndTruncatesLargeOnes(t *testing.T) {
	small := NewBlob([]byte(`{"a":1}`))
	b, _ := json.Marshal(struct {
		V Blob `json:"v"`
	}{small})
	if string(b) != `{"v":{"a":1}}` {
		t.Fatalf("small blob: %s", b)
	}
	big := `"` + strings.Repeat("é", MaxRecordedBytes) + `"`
	blob := NewBlob([]byte(big))
	if blob.JSON != nil || blob.Bytes != len(big) || len(blob.Truncated) > MaxRecordedBytes {
		t.Fatalf("big blob: bytes %d, kept %d", blob.Bytes, len(blob.Truncated))
	}
	raw, err := json.Marshal(blob)
	if err != nil || !json.Valid(raw) {
		t.Fatalf("truncated blob is not JSON: %v", err)
	}
	var back Blob
	if err := json.Unmarshal(raw, &back); err != nil || back.Bytes != blob.Bytes || back.Truncated != blob.Truncated || back.JSON != nil {
		t.Fatalf("round trip: %v %+v", err, back.Bytes)
	}
	// A recorded value that merely looks like a truncation marker stays a value.
	var v Blob
	if err := json.Unmarshal([]byte(`{"truncated":"x","bytes":3,"other":1}`), &v); err != nil || v.JSON == nil {
		t.Fatalf("lookalike: %+v", v)
	}
}
