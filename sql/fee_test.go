package sql_test

import (
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

	reconsql "recon/sql"
)

// TestFeeAmountIsExact checks fee_amount (migrations 0072, 0074), whose percentage
// path starts from a DOUBLE estimate, against exact decimal arithmetic:
// amount * value / 100 rounded half-even to 2 decimals. Ties and amounts of
// 12 decimals are where a DOUBLE estimate goes wrong.
func TestFeeAmountIsExact(t *testing.T) {
	db := openDB(t)
	if _, err := reconsql.Migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	type tc struct{ feeType, value, amount string }
	cases := []tc{
		{"PERCENTAGE", "0.5", "1.00"},             // 0.005: a tie, down to the even 0.00
		{"PERCENTAGE", "0.5", "3.00"},             // 0.015: a tie, up to the even 0.02
		{"PERCENTAGE", "0.5", "-3.00"},            // -0.015 -> -0.02
		{"PERCENTAGE", "0.42", "926.03"},          // 3.889326 -> 3.89
		{"PERCENTAGE", "0.125", "1000.00"},        // 1.25 exactly
		{"PERCENTAGE", "0.42", "123456789012.34"}, // past DOUBLE's cents at this size? still exact
		{"PERCENTAGE", "1", "0.500000000001"},     // just over a tie
		{"PERCENTAGE", "1", "0.499999999999"},     // just under a tie
		{"PERCENTAGE", "2.5", "0.2"},              // 0.005 -> 0.00
		{"PERCENTAGE", "0.000000000001", "999999999999.999999999999"},
		{"FLAT_RATE", "2.125", "100"}, // 2.12
		{"FLAT_RATE", "2.135", "100"}, // 2.14
		{"FLAT_RATE", "-2.005", "100"},
		{"FLAT_RATE", "5", "0"},
	}
	r := rand.New(rand.NewPCG(7, 13))
	for range 2000 {
		amount := decimal.New(r.Int64N(10_000_000_000), -int32(r.IntN(4))) // up to 12 digits, 0-3 decimals
		value := decimal.New(r.Int64N(1_000_000), -int32(4+r.IntN(3)))     // percents of 4 to 6 decimals
		cases = append(cases, tc{"PERCENTAGE", value.String(), amount.String()})
	}
	for range 500 {
		flat := decimal.New(r.Int64N(100_000_000), -int32(r.IntN(6))) // flat rates of 0 to 5 decimals, ties among them
		cases = append(cases, tc{"FLAT_RATE", flat.String(), "1"})
	}
	for _, c := range cases {
		v, a := decimal.RequireFromString(c.value), decimal.RequireFromString(c.amount)
		want := v.RoundBank(2)
		if c.feeType == "PERCENTAGE" {
			want = a.Mul(v).Div(decimal.New(100, 0)).RoundBank(2)
		}
		var got string
		err := db.QueryRowContext(t.Context(), `SELECT CAST(fee_amount(?, CAST(? AS DECIMAL(38,12)), CAST(? AS DECIMAL(38,12))) AS VARCHAR)`,
			c.feeType, c.value, c.amount).Scan(&got)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if !decimal.RequireFromString(got).Equal(want) {
			t.Errorf("fee_amount(%s, %s, %s) = %s, want %s", c.feeType, c.value, c.amount, got, want)
		}
	}
	var unknown *string
	if err := db.QueryRowContext(t.Context(), `SELECT CAST(fee_amount('TIERED', 1, 100) AS VARCHAR)`).Scan(&unknown); err != nil || unknown != nil {
		t.Errorf("fee_amount of an unknown fee_type = %v (%v), want null", unknown, err)
	}
}
