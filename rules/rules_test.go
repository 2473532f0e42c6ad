package rules

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestBuiltinRulesParse(t *testing.T) {
	rs, err := Load(Builtin)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 {
		t.Fatal("no built-in rules")
	}
	for _, r := range rs {
		if r.File != r.ID+".sql" {
			t.Errorf("rule %s in file %s", r.ID, r.File)
		}
	}
}

func TestParseErrors(t *testing.T) {
	const body = "SELECT 1 AS break_key, now() AS event_at\n"
	tests := []struct {
		name, file, text, want string
	}{
		{"unknown key", "a.sql", "-- id: a\n-- severity: P1\n-- description: d\n-- owner: me\n" + body, "a.sql:4: unknown header key \"owner\""},
		{"bad severity", "a.sql", "-- id: a\n-- severity: P9\n-- description: d\n" + body, "a.sql:2: severity \"P9\""},
		{"missing description", "a.sql", "-- id: a\n-- severity: P1\n" + body, "missing header \"description\""},
		{"id differs from file", "b.sql", "-- id: a\n-- severity: P1\n-- description: d\n" + body, "must match the file name"},
		{"undeclared parameter", "a.sql", "-- id: a\n-- severity: P1\n-- description: d\nSELECT $tolerance AS break_key\n", "a.sql:4: parameter $tolerance is used but not declared"},
		{"bad param", "a.sql", "-- id: a\n-- severity: P1\n-- description: d\n-- param: tolerance\n" + body, "a.sql:4: param \"tolerance\""},
		{"param twice", "a.sql", "-- id: a\n-- severity: P1\n-- description: d\n-- param: x = 1\n-- param: x = 2\n" + body, "a.sql:5: param \"x\" declared twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.file, tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseParams(t *testing.T) {
	r, err := Parse("a.sql", "-- id: a\n-- severity: P3\n-- description: d\n-- param: tolerance = 0.01  (in currency units)\nSELECT $tolerance AS break_key\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Params) != 1 || r.Params[0] != (Param{Name: "tolerance", Default: "0.01", Note: "in currency units"}) {
		t.Fatalf("params = %+v", r.Params)
	}
}

func TestLoadOverridesAndDuplicates(t *testing.T) {
	over := fstest.MapFS{"ops_missing_in_recon.sql": {Data: []byte("-- id: ops_missing_in_recon\n-- severity: P4\n-- description: local\nSELECT 1 AS break_key\n")}}
	rs, err := Load(Builtin, Dir{Name: "local", FS: over})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.ID == "ops_missing_in_recon" && (r.Severity != "P4" || r.Description != "local") {
			t.Fatalf("override not applied: %+v", r)
		}
	}
	dup := fstest.MapFS{
		"x.sql": {Data: []byte("-- id: x\n-- severity: P4\n-- description: d\nSELECT 1\n")},
		"y.sql": {Data: []byte("-- id: x\n-- severity: P4\n-- description: d\nSELECT 1\n")},
	}
	// Ids match file names, so a second rule with one id fails on its name.
	if _, err := Load(Dir{Name: "d", FS: dup}); err == nil || !strings.Contains(err.Error(), `d/y.sql:1: id "x" must match the file name`) {
		t.Fatalf("Load(dup) error = %v", err)
	}
}
