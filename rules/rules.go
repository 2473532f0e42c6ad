// Package rules holds the reconciliation rules, one SQL file each, and runs
// them against the warehouse to find breaks.
//
// A rule file starts with comment lines declaring the rule (a comment line
// whose text before a colon is one lower-case word is a header line; any
// other comment line is a plain comment):
//
//	-- id: ops_recon_amount_mismatch
//	-- severity: P2
//	-- description: Amount or currency of a payment differ between PAYMENT_OPS and RECON.
//	-- reads: payment_ops, recon_transactions
//	-- param: tolerance DECIMAL(38,12) = 0  (largest difference that is not a break)
//
// followed by one SELECT returning the break columns (see Apply). Parameters
// are bound as text, never pasted into the SQL: every use reads
// CAST($name AS <declared type>). The runner also binds $window_start,
// $window_end (TIMESTAMPTZ, end exclusive), $as_of and $run_id, and provides
// the temporary table node_accounts(account). docs/rules.md describes the
// format, the catalogue and the break lifecycle.
package rules

import (
	"bufio"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

//go:embed *.sql
var builtin embed.FS

// Builtin is the catalogue shipped with recon.
var Builtin = Dir{Name: "builtin", FS: builtin}

// Dir is a folder of rule files; Name prefixes its file names in messages.
type Dir struct {
	Name string
	FS   fs.FS
}

// Rule is one parsed rule file.
type Rule struct {
	ID          string
	Severity    string
	Description string
	Reads       []string // tables the rule reads; a gap in one holds the rule (see Gap)
	Params      []Param  // declared parameters, then the implicit escalation ones not redeclared
	SQL         string   // the whole file, without a trailing semicolon
	Text        string   // the file exactly as read; SHA256 is its hash
	File        string   // folder name and file name, for messages
	SHA256      string   // hex hash of the file, recorded in manifests
}

// Param is a rule parameter and its default value.
type Param struct {
	Name    string
	Type    string // one of ParamTypes
	Default string
	Note    string
	Line    int // 0 for an implicit parameter
}

// ParamTypes are the types a parameter may declare.
var ParamTypes = []string{"DECIMAL(38,12)", "BIGINT", "INTERVAL", "VARCHAR"}

// Escalation parameters every rule has; a rule file may redeclare them with
// another default. A break's severity rises one level when abs(difference)
// exceeds escalate_amount (in the break's currency) or when it has been open
// more than escalate_after_days days; an acknowledged break does not
// escalate until it is older than escalate_acknowledged_after_days.
var Escalation = []Param{
	{Name: "escalate_amount", Type: "DECIMAL(38,12)", Default: "100000", Note: "abs(difference) above which the severity rises one level, in the break's currency"},
	{Name: "escalate_after_days", Type: "BIGINT", Default: "5", Note: "age in days above which the severity rises one level"},
	{Name: "escalate_acknowledged_after_days", Type: "BIGINT", Default: "30", Note: "age in days above which an acknowledged break escalates again (until then escalation ignores it)"},
}

// Bound names the runner provides to every rule.
var Bound = []string{"window_start", "window_end", "as_of", "run_id"}

var (
	idPattern    = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	headerKey    = regexp.MustCompile(`^[a-z][a-z_]*$`) // other comment lines are plain comments
	paramPattern = regexp.MustCompile(`^([a-z][a-z0-9_]*)\s+(\S+)\s*=\s*([^(]*?)\s*(?:\((.*)\))?$`)
	paramUse     = regexp.MustCompile(`\$([a-z][a-z0-9_]*)`)
	castUse      = regexp.MustCompile(`(?i)CAST\(\s*\$([a-z][a-z0-9_]*)\s+AS\s+(DECIMAL\s*\(\s*38\s*,\s*12\s*\)|BIGINT|INTERVAL|VARCHAR)\s*\)`)
	severities   = []string{"P1", "P2", "P3", "P4"}
)

// Load parses and validates every rule of each folder; a rule in a later
// folder overrides the rule with the same id in an earlier one. Every
// problem of every file is reported, naming file and line.
func Load(dirs ...Dir) ([]Rule, error) {
	byID := map[string]Rule{}
	var errs []error
	for _, dir := range dirs {
		names, err := fs.Glob(dir.FS, "*.sql")
		if err != nil {
			return nil, fmt.Errorf("list rules in %s: %w", dir.Name, err)
		}
		for _, name := range names {
			file := path.Join(dir.Name, name)
			b, err := fs.ReadFile(dir.FS, name)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", file, err))
				continue
			}
			r, err := Parse(file, string(b))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			byID[r.ID] = r // ids match file names, so one folder cannot hold an id twice
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]Rule, 0, len(byID))
	for _, r := range byID {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Rule) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Parse reads one rule file; file is the name used in messages, and its base
// name must be <id>.sql.
func Parse(file, text string) (Rule, error) {
	sum := sha256.Sum256([]byte(text))
	r := Rule{File: file, Text: text, SHA256: hex.EncodeToString(sum[:])}
	r.SQL = strings.TrimRight(strings.TrimSpace(text), ";")
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...)))
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(text))
	line, idLine := 0, 1
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(l, "--") {
			break
		}
		key, val, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(l, "--")), ":")
		if key = strings.TrimSpace(key); !ok || !headerKey.MatchString(key) {
			continue // a plain comment
		}
		val = strings.TrimSpace(val)
		if prev, dup := seen[key]; dup && key != "param" {
			fail(line, "header %q given twice (first on line %d)", key, prev)
			continue
		}
		seen[key] = line
		switch key {
		case "id":
			if !idPattern.MatchString(val) {
				fail(line, "id %q must be lower_snake_case", val)
			}
			r.ID, idLine = val, line
		case "severity":
			if !slices.Contains(severities, val) {
				fail(line, "severity %q must be one of P1, P2, P3, P4", val)
			}
			r.Severity = val
		case "description":
			r.Description = val
		case "reads":
			for t := range strings.SplitSeq(val, ",") {
				t = strings.TrimSpace(t)
				if !idPattern.MatchString(t) {
					fail(line, "reads: %q is not a table name", t)
					continue
				}
				if slices.Contains(r.Reads, t) {
					fail(line, "reads: table %q listed twice", t)
				}
				r.Reads = append(r.Reads, t)
			}
		case "param":
			parseParam(&r, line, val, fail)
		default:
			fail(line, "unknown header key %q (want id, severity, description, reads, param)", key)
		}
	}
	for _, need := range []struct{ name, val string }{{"id", r.ID}, {"severity", r.Severity}, {"description", r.Description}, {"reads", strings.Join(r.Reads, ",")}} {
		if need.val == "" {
			fail(1, "missing header %q", need.name)
		}
	}
	if r.ID != "" && strings.TrimSuffix(path.Base(file), ".sql") != r.ID {
		fail(idLine, "id %q must match the file name (a rule lives in <id>.sql)", r.ID)
	}
	checkUses(&r, fail)
	for _, p := range Escalation {
		if !slices.ContainsFunc(r.Params, func(q Param) bool { return q.Name == p.Name }) {
			r.Params = append(r.Params, p)
		}
	}
	return r, errors.Join(errs...)
}

func parseParam(r *Rule, line int, val string, fail func(int, string, ...any)) {
	m := paramPattern.FindStringSubmatch(val)
	if m == nil || m[3] == "" {
		fail(line, "param %q must read: name TYPE = default  (note)", val)
		return
	}
	p := Param{Name: m[1], Type: strings.ToUpper(m[2]), Default: m[3], Note: m[4], Line: line}
	if slices.Contains(Bound, p.Name) || p.Name == "rule_id" {
		fail(line, "param %q is a name the runner binds; choose another", p.Name)
	}
	if !slices.Contains(ParamTypes, p.Type) {
		fail(line, "param %q: type %q must be one of %s", p.Name, m[2], strings.Join(ParamTypes, ", "))
	}
	for _, e := range Escalation {
		if e.Name == p.Name && e.Type != p.Type {
			fail(line, "param %q must have type %s", p.Name, e.Type)
		}
	}
	for _, q := range r.Params {
		if q.Name == p.Name {
			fail(line, "param %q declared twice (first on line %d)", p.Name, q.Line)
			return
		}
	}
	r.Params = append(r.Params, p)
}

// checkUses checks that every $name in the SQL is bound or declared, that
// every declared parameter is read as CAST($name AS <its type>), and that
// every declared parameter is used.
func checkUses(r *Rule, fail func(int, string, ...any)) {
	types := map[string]string{}
	for _, p := range r.Params {
		types[p.Name] = p.Type
	}
	used := map[string]bool{}
	for i, l := range strings.Split(r.SQL, "\n") {
		l = code(l)
		casts := map[int]string{} // offset of the $ -> cast type
		for _, m := range castUse.FindAllStringSubmatchIndex(l, -1) {
			casts[m[2]-1] = strings.ToUpper(strings.Join(strings.Fields(l[m[4]:m[5]]), ""))
		}
		for _, m := range paramUse.FindAllStringSubmatchIndex(l, -1) {
			name := l[m[2]:m[3]]
			if slices.Contains(Bound, name) {
				continue
			}
			typ, ok := types[name]
			switch {
			case !ok:
				fail(i+1, "parameter $%s is used but not declared (add -- param: %s TYPE = default)", name, name)
				types[name] = "?" // report once
			case typ == "?":
			case casts[m[0]] != typ:
				fail(i+1, "parameter $%s must be read as CAST($%s AS %s): parameters are bound as text", name, name, typ)
			}
			used[name] = true
		}
	}
	for _, p := range r.Params {
		if !used[p.Name] && !slices.ContainsFunc(Escalation, func(e Param) bool { return e.Name == p.Name }) {
			fail(p.Line, "param %q is declared but never used", p.Name)
		}
	}
}

// code returns a line of SQL without its trailing -- comment; string literals stay.
func code(line string) string {
	quoted := false
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\'':
			quoted = !quoted // '' inside a literal toggles twice
		case !quoted && strings.HasPrefix(line[i:], "--"):
			return line[:i]
		}
	}
	return line
}

// Param returns the rule's parameter of that name.
func (r Rule) Param(name string) (Param, bool) {
	i := slices.IndexFunc(r.Params, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return r.Params[i], true
}
