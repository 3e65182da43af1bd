package db

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestRecordJSONKept checks that a record as stored reads with its depends and bin parsed
// and is written back as the same bytes.
func TestRecordJSONKept(t *testing.T) {
	stored := []byte(`{"name":"app","version":"1.0","sha256":"ab","depends":["lib\u003e=1,\u003c2"],"bin":["bin/app","a=bin/app2"],"installed":"2026-01-02T03:04:05Z","files":2,"size":10}`)
	var r Record
	if err := json.Unmarshal(stored, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Depends) != 1 || r.Depends[0].Name != "lib" || len(r.Depends[0].Constraints) != 2 || r.Bin[1].Name != "a" || r.Bin[1].Path != "bin/app2" {
		t.Errorf("read %+v", r)
	}
	out, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, stored) {
		t.Errorf("written as\n%s, want\n%s", out, stored)
	}
}
