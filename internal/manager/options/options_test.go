package options

import "testing"

func TestOptionsValidateBoundsTheStatusBudget(t *testing.T) {
	if err := (Options{StatusBudgetBytes: MaxStatusBudgetBytes}).Validate(); err != nil {
		t.Errorf("the maximum budget is refused: %v", err)
	}
	if err := (Options{StatusBudgetBytes: MaxStatusBudgetBytes + 1}).Validate(); err == nil {
		t.Error("a budget above the maximum is accepted")
	}
}
