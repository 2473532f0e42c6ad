package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"recon/pipeline"
	"recon/rules"
)

// actionHelp says what each workflow action does.
var actionHelp = map[string]string{
	rules.ActionAck: `acknowledges breaks: they stay open but leave the new counts and --fail-on-breaks, and
do not escalate until older than the rule's escalate_acknowledged_after_days (default 30).`,
	rules.ActionExplain: `explains breaks: they are closed until --until (the last day the explanation holds)
or until their amount, currency or counterpart changes; then a run reopens them with the
reason "changed since explained" or "explanation expired".`,
	rules.ActionWriteoff: `writes breaks off: closed for good, counted with their amount per currency in the
summary's Handled panel.`,
	rules.ActionReopen: `reopens breaks that were acknowledged, explained or written off.`,
}

// breaksActionCmd is recon breaks ack|explain|writeoff|reopen.
func (a *app) breaksActionCmd(action string) *cobra.Command {
	var sel selection
	var reason, by, until string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   action + " [BREAK_ID...]",
		Short: strings.ToUpper(action[:1]) + action[1:] + " breaks, with a reason (journalled; the next run applies it)",
		Long: action + " " + actionHelp[action] + `

Breaks are named by id, or selected with --rule, --severity and --older-than (with ids
too, the selection narrows them). Each break gets one append-only event: who (--by, else
the operating system user), when, what, why, and the break's amount and status now. The
event is appended to the journal <db>.journal at once (the command never waits on a run
or an analyst); the next run applies it to break_events before its rules, and archives it
with its inputs. recon breaks lists pending events until then. --dry-run shows what
would change and journals nothing.`,
		Example: `  recon breaks ` + action + ` 3f2a9c0d1e2b4a5c --reason "timing: booked on the 2nd"` + map[string]string{
			rules.ActionExplain: "  --until 2026-11-30", rules.ActionWriteoff: "", rules.ActionAck: "", rules.ActionReopen: ""}[action] + `
  recon breaks ` + action + ` --severity P1 --rule payment_missing_in_statement --reason "ticket FIN-123" --dry-run`,
		RunE: func(cmd *cobra.Command, ids []string) error {
			if strings.TrimSpace(reason) == "" {
				return usageErr("--reason is required: say why")
			}
			if err := sel.check(ids); err != nil {
				return err
			}
			now := time.Now().UTC().Truncate(time.Microsecond)
			if until != "" {
				if action != rules.ActionExplain {
					return usageErr("--until applies to explain only")
				}
				d, err := time.Parse(time.DateOnly, until)
				if err != nil {
					return usageErr("--until %q: want YYYY-MM-DD", until)
				}
				if d.Before(now.Truncate(24 * time.Hour)) {
					return usageErr("--until %s is in the past", until)
				}
			}
			if by == "" {
				by = osUser()
			}
			return a.breaksAction(cmd, action, ids, sel, rules.Event{Reason: reason, Actor: by, At: now, Until: until}, dryRun)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required), e.g. \"timing: booked on the 2nd\" or \"written off, ticket FIN-123\"")
	cmd.Flags().StringVar(&by, "by", "", "who decides (default: the operating system user)")
	if action == rules.ActionExplain {
		cmd.Flags().StringVar(&until, "until", "", "last day (YYYY-MM-DD, UTC) the explanation holds; the first run after it reopens the break")
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show what would change; journal nothing")
	sel.flags(cmd)
	addFlags(cmd.Flags(), dbSettings)
	return cmd
}

// selection picks breaks by rule, severity and age.
type selection struct {
	rules, severities []string
	olderThan         string
	days              int
}

func (s *selection) flags(cmd *cobra.Command) {
	cmd.Flags().StringSliceVar(&s.rules, "rule", nil, "select breaks of these rule ids")
	cmd.Flags().StringSliceVar(&s.severities, "severity", nil, "select breaks of these severities (P1..P4)")
	cmd.Flags().StringVar(&s.olderThan, "older-than", "", "select breaks first seen more than N days ago (N or Nd)")
}

func (s *selection) check(ids []string) error {
	for _, v := range s.severities {
		if !slices.Contains([]string{"P1", "P2", "P3", "P4"}, v) {
			return usageErr("--severity %q: want P1, P2, P3 or P4", v)
		}
	}
	s.days = -1
	if s.olderThan != "" {
		n, err := strconv.Atoi(strings.TrimSuffix(s.olderThan, "d"))
		if err != nil || n < 0 {
			return usageErr("--older-than %q: want a number of days (7 or 7d)", s.olderThan)
		}
		s.days = n
	}
	if len(ids) == 0 && len(s.rules) == 0 && len(s.severities) == 0 && s.days < 0 {
		return usageErr("name breaks by id, or select them with --rule, --severity or --older-than")
	}
	return nil
}

// breaksAction selects the breaks, checks the action against each one's
// workflow status (published, then pending journal lines), and journals it.
func (a *app) breaksAction(cmd *cobra.Command, action string, ids []string, sel selection, base rules.Event, dryRun bool) error {
	ctx := cmd.Context()
	dbPath := a.lookup(cmd.Flags(), settingNamed("db")).val
	db, err := a.openPublished(cmd)
	if err != nil {
		return err
	}
	cands, err := selectBreaks(ctx, db, ids, sel)
	db.Close()
	if err != nil {
		return err
	}
	pending, err := pendingEvents(ctx, dbPath)
	if err != nil {
		return err
	}
	// A bulk action can name hundreds of thousands of breaks: the events are
	// made once, journalled and dropped before the table is printed.
	skips := make([]error, len(cands))
	var events []rules.Event
	if !dryRun {
		events = make([]rules.Event, 0, len(cands))
	}
	changed := 0
	for i := range cands {
		c := &cands[i]
		if p, ok := pending[c.BreakID]; ok {
			c.PrevWorkflow = p[len(p)-1].Workflow
		}
		if skips[i] = rules.Allowed(action, c.PrevWorkflow, c.BreakStatus); skips[i] != nil {
			continue
		}
		if changed++; dryRun {
			continue
		}
		e := c.Event
		e.ID, e.Action, e.Workflow = uuid.NewString(), action, rules.Actions[action]
		e.Reason, e.Actor, e.At, e.Until = base.Reason, base.Actor, base.At, base.Until
		events = append(events, e)
	}
	verb := "journalled"
	if dryRun {
		verb = "would " + action
	} else if len(events) > 0 {
		if err := pipeline.AppendJournal(ctx, pipeline.JournalPath(dbPath), events); err != nil {
			return err
		}
		events = nil
	}
	tw := newAligned(a.stdout)
	fmt.Fprintln(tw, "BREAK_ID\tRULE\tSEVERITY\tSTATUS\tAMOUNT\tWORKFLOW\tRESULT")
	for i, c := range cands {
		res := verb + ": " + c.PrevWorkflow + " -> " + rules.Actions[action]
		if skips[i] != nil {
			res = "skipped: " + skips[i].Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %s\t%s\t%s\n", c.BreakID, c.Rule, c.Severity, c.BreakStatus, c.Amount, c.Currency,
			c.PrevWorkflow, res)
	}
	tw.Flush()
	switch {
	case len(cands) == 0:
		fmt.Fprintln(a.stdout, "no break matches the selection")
	case dryRun:
		fmt.Fprintf(a.stdout, "dry run: %d of %d breaks would change; nothing journalled\n", changed, len(cands))
	default:
		fmt.Fprintf(a.stdout, "%d events journalled in %s by %s; the next run applies them\n", changed,
			pipeline.JournalPath(dbPath), base.Actor)
	}
	return nil
}

// selectBreaks reads the breaks named or selected, with their workflow
// status and the snapshot an event records. Unknown ids are a usage error.
func selectBreaks(ctx context.Context, db *pipeline.Snapshot, ids []string, sel selection) ([]pipeline.Candidate, error) {
	found, err := pipeline.Ledger{DB: db.DB}.Candidates(ctx, pipeline.BreakFilter{Rules: sel.rules, Severities: sel.severities}, ids, sel.days)
	if err != nil {
		return nil, err
	}
	var unknown []string
	if len(ids) > 0 {
		named := make(map[string]bool, len(found))
		for _, c := range found {
			named[c.BreakID] = true
		}
		for _, id := range ids {
			if !named[id] {
				unknown = append(unknown, id)
			}
		}
	}
	if len(unknown) > 0 {
		return nil, usageErr("no break %s in the published database (or not matching the selection); nothing journalled",
			strings.Join(unknown, ", "))
	}
	return found, nil
}

// pendingEvents are the journal's valid events not yet in the published
// file's break_events, by break, in journal order.
func pendingEvents(ctx context.Context, dbPath string) (map[string][]rules.Event, error) {
	path := pipeline.JournalPath(dbPath)
	if fi, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Size() == 0) {
		return nil, nil
	}
	var published rules.Querier // nil: no published file, every valid line is pending
	if _, err := os.Stat(dbPath); err == nil {
		db, err := pipeline.OpenPublished(dbPath)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		published = db.DB
	}
	events, err := pipeline.PendingEvents(ctx, published, path)
	if err != nil {
		return nil, err
	}
	out := map[string][]rules.Event{}
	for _, e := range events {
		out[e.BreakID] = append(out[e.BreakID], e)
	}
	return out, nil
}

// osUser names who typed the command.
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

// breaksVerifyCmd is recon breaks verify.
func (a *app) breaksVerifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check the hash chain of break_events; exit 1 naming the first bad event",
		Long: `verify walks break_events of the published database in seq order and checks that each
event's prev_hash is the previous event's hash and its hash that of its own fields
(sha256 over a canonical encoding). A changed, removed or inserted event breaks the chain:
verify then names the first bad event and exits 1. It also counts the journal's lines
not applied yet.`,
		Example: `  recon breaks verify`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := a.openPublished(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			n, err := rules.Verify(cmd.Context(), db)
			var ce *rules.ChainError
			if errors.As(err, &ce) {
				return &codeError{exitError, fmt.Errorf("chain broken after %d good events: %w", n, err)}
			}
			if err != nil {
				return err
			}
			var head sql.NullString
			if err := db.QueryRowContext(cmd.Context(), `SELECT max_by(hash, seq) FROM break_events`).Scan(&head); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "break_events: %d events, chain intact, head %s\n", n, head.String)
			return a.notePending(cmd)
		},
	}
	addFlags(cmd.Flags(), dbSettings)
	return cmd
}

// notePending tells, on stderr, how many journalled actions wait for a run.
func (a *app) notePending(cmd *cobra.Command) error {
	dbPath := a.lookup(cmd.Flags(), settingNamed("db")).val
	pending, err := pendingEvents(cmd.Context(), dbPath)
	if err != nil {
		return err
	}
	n := 0
	for _, p := range pending {
		n += len(p)
	}
	if n > 0 {
		fmt.Fprintf(a.stderr, "%d workflow actions in %s are not applied yet: the next run (recon run, the nightly run) applies them\n",
			n, pipeline.JournalPath(dbPath))
	}
	return nil
}
