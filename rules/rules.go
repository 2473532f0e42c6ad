// Package rules holds the reconciliation rules, one SQL file each, and runs
// them against the warehouse to find breaks.
//
// A rule file starts with comment lines declaring the rule:
//
//	-- id: ops_missing_in_recon
//	-- severity: P2
//	-- description: A COMPLETED or EXECUTED payment in PAYMENT_OPS has no RECON row.
//	-- param: grace_hours = 24  (optional note)
//
// followed by one SELECT returning the break columns (see Columns). The SQL
// reads parameters as $name; the runner binds them, together with
// $window_start, $window_end (TIMESTAMPTZ, end exclusive), $as_of and
// $run_id, and provides the temporary table node_accounts(account).
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
	"sort"
	"strings"
)

//go:embed *.sql
var builtin embed.FS

// Builtin is the catalogue shipped with recon.
var Builtin fs.FS = builtin

// Rule is one parsed rule file.
type Rule struct {
	ID          string
	Severity    string
	Description string
	Params      []Param
	SQL         string // the whole file
	File        string // file name, for messages
	SHA256      string // hex hash of the file, recorded in manifests
}

// Param is a rule parameter and its default value.
type Param struct {
	Name    string
	Default string
	Note    string
}

var (
	idPattern    = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	paramPattern = regexp.MustCompile(`^([a-z][a-z0-9_]*)\s*=\s*(\S+)\s*(?:\((.*)\))?$`)
	paramUse     = regexp.MustCompile(`\$([a-z][a-z0-9_]*)`)
	severities   = map[string]bool{"P1": true, "P2": true, "P3": true, "P4": true}
)

// Bound names the runner provides to every rule.
var Bound = []string{"window_start", "window_end", "as_of", "run_id"}

// Load parses and validates every rule of each folder; a rule in a later
// folder overrides the rule with the same id in an earlier one. Every
// problem of every file is reported, naming file and line.
func Load(dirs ...fs.FS) ([]Rule, error) {
	byID := map[string]Rule{}
	var errs []error
	for _, dir := range dirs {
		names, err := fs.Glob(dir, "*.sql")
		if err != nil {
			return nil, fmt.Errorf("list rules: %w", err)
		}
		for _, name := range names {
			b, err := fs.ReadFile(dir, name)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				continue
			}
			r, err := Parse(path.Base(name), string(b))
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
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Parse reads one rule file.
func Parse(file, text string) (Rule, error) {
	sum := sha256.Sum256([]byte(text))
	r := Rule{File: file, SQL: text, SHA256: hex.EncodeToString(sum[:])}
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...)))
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	line, idLine := 0, 1
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(l, "--") {
			break
		}
		key, val, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(l, "--")), ":")
		if !ok {
			continue // a plain comment
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "id":
			if !idPattern.MatchString(val) {
				fail(line, "id %q must be lower_snake_case", val)
			}
			r.ID, idLine = val, line
		case "severity":
			if !severities[val] {
				fail(line, "severity %q must be one of P1, P2, P3, P4", val)
			}
			r.Severity = val
		case "description":
			r.Description = val
		case "param":
			m := paramPattern.FindStringSubmatch(val)
			if m == nil {
				fail(line, "param %q must read name = default (note)", val)
				continue
			}
			for _, p := range r.Params {
				if p.Name == m[1] {
					fail(line, "param %q declared twice", m[1])
				}
			}
			r.Params = append(r.Params, Param{Name: m[1], Default: m[2], Note: m[3]})
		default:
			fail(line, "unknown header key %q (want id, severity, description, param)", strings.TrimSpace(key))
		}
	}
	for _, need := range []struct{ name, val string }{{"id", r.ID}, {"severity", r.Severity}, {"description", r.Description}} {
		if need.val == "" {
			fail(1, "missing header %q", need.name)
		}
	}
	if r.ID != "" && strings.TrimSuffix(file, ".sql") != r.ID {
		fail(idLine, "id %q must match the file name (a rule lives in <id>.sql)", r.ID)
	}
	declared := map[string]bool{}
	for _, b := range Bound {
		declared[b] = true
	}
	for _, p := range r.Params {
		declared[p.Name] = true
	}
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--") {
			continue
		}
		for _, m := range paramUse.FindAllStringSubmatch(l, -1) {
			if !declared[m[1]] {
				fail(i+1, "parameter $%s is used but not declared (add -- param: %s = <default>)", m[1], m[1])
				declared[m[1]] = true
			}
		}
	}
	return r, errors.Join(errs...)
}
