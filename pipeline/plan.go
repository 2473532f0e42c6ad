package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"recon/extract"
	"recon/extract/raw"
	"recon/rules"
)

// Plan is what a run would do, worked out without any request or write.
type Plan struct {
	Reports    raw.Window     // days reconciled
	Statements raw.Window     // days of statements pulled (one more, see StatementWindow)
	Calls      []extract.Call // the requests extraction begins with
	Rules      []string       // rule ids, in the order they run
}

// PlanRun returns what Run(ctx, cfg, w) would do if it started now. It
// prepares cfg (Prepare) unless it is, and calls nothing.
func PlanRun(cfg Config, w raw.Window) (*Plan, error) {
	cfg, err := prepared(cfg)
	if err != nil {
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	client, err := extractClient(cfg, now)
	if err != nil {
		return nil, err
	}
	req := extractRequest(cfg, w, now().UTC())
	calls, err := client.Plan(req)
	if err != nil {
		return nil, err
	}
	p := &Plan{Reports: req.Reports, Statements: req.Statements, Calls: calls}
	for _, r := range cfg.catalogue {
		p.Rules = append(p.Rules, r.ID)
	}
	return p, nil
}

// Catalogue loads the rules a run applies (the built-in ones, then those of
// cfg.RulesDir) and checks that every override in cfg.Params names a
// parameter of one of them.
func Catalogue(cfg Config) ([]rules.Rule, error) {
	catalogue, err := loadRules(cfg.RulesDir)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, r := range catalogue {
		for _, p := range r.Params {
			known[r.ID+"."+p.Name] = true
		}
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(cfg.Params)) {
		if !known[k] {
			errs = append(errs, fmt.Errorf("rule parameter %s: no rule has it (recon rules list shows them)", k))
		}
	}
	return catalogue, errors.Join(errs...)
}
