package rules

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinRulesParse(t *testing.T) {
	rs, err := Load(Builtin)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) < 10 {
		t.Fatalf("%d built-in rules", len(rs))
	}
	for _, r := range rs {
		if r.File != "builtin/"+r.ID+".sql" || len(r.Reads) == 0 || r.Description == "" {
			t.Errorf("rule %s: file %s, reads %v", r.ID, r.File, r.Reads)
		}
	}
}

const head = "-- id: a\n-- severity: P1\n-- description: d\n-- reads: payment_ops\n"

func TestParseErrors(t *testing.T) {
	const body = "SELECT 1 AS break_key, now() AS event_at\n"
	tests := []struct {
		name, file, text, want string
	}{
		{"unknown key", "a.sql", head + "-- owner: me\n" + body, `a.sql:5: unknown header key "owner"`},
		{"key twice", "a.sql", head + "-- severity: P2\n" + body, `a.sql:5: header "severity" given twice (first on line 2)`},
		{"bad severity", "a.sql", "-- id: a\n-- severity: P9\n-- description: d\n-- reads: payment_ops\n" + body, `a.sql:2: severity "P9"`},
		{"missing description", "a.sql", "-- id: a\n-- severity: P1\n-- reads: payment_ops\n" + body, `missing header "description"`},
		{"missing reads", "a.sql", "-- id: a\n-- severity: P1\n-- description: d\n" + body, `a.sql:1: missing header "reads"`},
		{"table twice", "a.sql", "-- id: a\n-- severity: P1\n-- description: d\n-- reads: payment_ops, payment_ops\n" + body, `a.sql:4: reads: table "payment_ops" listed twice`},
		{"id differs from file", "rules/b.sql", head + body, `rules/b.sql:1: id "a" must match the file name`},
		{"undeclared parameter", "a.sql", head + "SELECT $tolerance AS break_key\n", `a.sql:5: parameter $tolerance is used but not declared`},
		{"parameter without type", "a.sql", head + "-- param: tolerance = 0\n" + body, `a.sql:5: param "tolerance = 0" must read: name TYPE = default`},
		{"parameter without default", "a.sql", head + "-- param: tolerance DECIMAL(38,12) =\n" + body, `a.sql:5: param "tolerance DECIMAL(38,12) =" must read`},
		{"unknown type", "a.sql", head + "-- param: n INTEGER = 1\nSELECT CAST($n AS INTEGER) AS break_key\n", `a.sql:5: param "n": type "INTEGER" must be one of`},
		{"parameter twice", "a.sql", head + "-- param: x BIGINT = 1\n-- param: x BIGINT = 2\nSELECT CAST($x AS BIGINT)\n", `a.sql:6: param "x" declared twice (first on line 5)`},
		{"bound name", "a.sql", head + "-- param: as_of INTERVAL = 1 hour\n" + body, `a.sql:5: param "as_of" is a name the runner binds`},
		{"read without cast", "a.sql", head + "-- param: tolerance DECIMAL(38,12) = 0\nSELECT 1 WHERE x > $tolerance\n", `a.sql:6: parameter $tolerance must be read as CAST($tolerance AS DECIMAL(38,12))`},
		{"cast to another type", "a.sql", head + "-- param: grace INTERVAL = 1 day\nSELECT CAST($grace AS VARCHAR)\n", `a.sql:6: parameter $grace must be read as CAST($grace AS INTERVAL)`},
		{"unused parameter", "a.sql", head + "-- param: grace INTERVAL = 1 day\n" + body, `a.sql:5: param "grace" is declared but never used`},
		{"escalation type", "a.sql", head + "-- param: escalate_after_days INTERVAL = 5 days\n" + body, `a.sql:5: param "escalate_after_days" must have type BIGINT`},
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

func TestParse(t *testing.T) {
	r, err := Parse("a.sql", "-- id: a\n-- severity: P3\n-- description: d\n-- reads: payment_ops, recon_transactions\n"+
		"-- A plain comment: its colon does not make it a header.\n"+
		"-- param: tolerance DECIMAL(38,12) = 0.01  (in currency units)\n"+
		"-- param: grace INTERVAL = 36 hours\n"+
		"-- param: escalate_after_days BIGINT = 10\n"+
		"SELECT 1 AS break_key WHERE x > CAST($tolerance AS decimal(38, 12)) AND y < $as_of - CAST( $grace AS INTERVAL ) -- $ignored\n"+
		"  AND z = 'a -- in a literal';\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Param{
		{Name: "tolerance", Type: "DECIMAL(38,12)", Default: "0.01", Note: "in currency units", Line: 6},
		{Name: "grace", Type: "INTERVAL", Default: "36 hours", Line: 7},
		{Name: "escalate_after_days", Type: "BIGINT", Default: "10", Line: 8},
		Escalation[0], Escalation[2],
	}
	if diff := cmp.Diff(want, r.Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"payment_ops", "recon_transactions"}, r.Reads); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
	if strings.HasSuffix(r.SQL, ";") {
		t.Errorf("SQL keeps its trailing semicolon: %q", r.SQL)
	}
}

// A literal that names a parameter without a CAST is read as a use: the
// check is textual, so rules keep such text out of their literals.
func TestParseLiteralUse(t *testing.T) {
	_, err := Parse("a.sql", head+"-- param: x BIGINT = 1\nSELECT CAST($x AS BIGINT), '$x'\n")
	if err == nil || !strings.Contains(err.Error(), "a.sql:6: parameter $x must be read as CAST") {
		t.Fatalf("Parse error = %v", err)
	}
}

func TestLoadOverridesAndDuplicates(t *testing.T) {
	over := fstest.MapFS{"ops_missing_in_recon.sql": {Data: []byte("-- id: ops_missing_in_recon\n-- severity: P4\n-- description: local\n-- reads: payment_ops\nSELECT 1 AS break_key\n")}}
	rs, err := Load(Builtin, Dir{Name: "local", FS: over})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rs {
		if r.ID == "ops_missing_in_recon" {
			found = r.Severity == "P4" && r.Description == "local" && r.File == "local/ops_missing_in_recon.sql"
		}
	}
	if !found {
		t.Fatal("override not applied")
	}
	dup := fstest.MapFS{
		"x.sql": {Data: []byte("-- id: x\n-- severity: P4\n-- description: d\n-- reads: t\nSELECT 1\n")},
		"y.sql": {Data: []byte("-- id: x\n-- severity: P4\n-- description: d\n-- reads: t\nSELECT 1\n")},
	}
	// Ids match file names, so a second rule with one id fails on its name.
	if _, err := Load(Dir{Name: "d", FS: dup}); err == nil || !strings.Contains(err.Error(), `d/y.sql:1: id "x" must match the file name`) {
		t.Fatalf("Load(dup) error = %v", err)
	}
	// Every file's problems are reported, not only the first.
	bad := fstest.MapFS{
		"p.sql": {Data: []byte("-- id: p\n-- severity: P9\n-- description: d\n-- reads: t\nSELECT 1\n")},
		"q.sql": {Data: []byte("-- id: q\n-- severity: P1\n-- reads: t\nSELECT 1\n")},
	}
	_, err = Load(Dir{Name: "d", FS: bad})
	if err == nil || !strings.Contains(err.Error(), "d/p.sql:2") || !strings.Contains(err.Error(), `d/q.sql:1: missing header "description"`) {
		t.Fatalf("Load(bad) error = %v", err)
	}
}
