package stats

import "fmt"

// PassAtK is the unbiased estimator of pass@k from the HumanEval paper (Chen et al. 2021): the chance that at
// least one of k trials drawn without replacement from a case's n trials, c of which passed, passes:
// 1 - C(n-c, k)/C(n, k). It is computed as the product 1 - prod_{i=n-c+1}^{n} (1 - k/i), which neither overflows
// nor cancels for any n. Needs 1 <= k <= n and 0 <= c <= n.
func PassAtK(n, c, k int) (float64, error) {
	if err := checkPassK(n, c, k); err != nil {
		return 0, fmt.Errorf("pass@k: %w", err)
	}
	if n-c < k {
		return 1, nil
	}
	q := 1.0
	for i := n - c + 1; i <= n; i++ {
		q *= 1 - float64(k)/float64(i)
	}
	return 1 - q, nil
}

// PassHatK is the unbiased estimator of pass^k from tau-bench (Yao et al. 2024): the chance that all of k trials
// drawn without replacement from a case's n trials, c of which passed, pass: C(c, k)/C(n, k), computed as
// prod_{i=0}^{k-1} (c-i)/(n-i). pass^1 = pass@1 = c/n; pass^n is 1 only when every trial passed. Needs
// 1 <= k <= n and 0 <= c <= n.
func PassHatK(n, c, k int) (float64, error) {
	if err := checkPassK(n, c, k); err != nil {
		return 0, fmt.Errorf("pass^k: %w", err)
	}
	if c < k {
		return 0, nil
	}
	p := 1.0
	for i := range k {
		p *= float64(c-i) / float64(n-i)
	}
	return p, nil
}

func checkPassK(n, c, k int) error {
	if n < 1 || c < 0 || c > n || k < 1 || k > n {
		return fmt.Errorf("%d passed of %d trials with k = %d: want 0 <= passed <= trials and 1 <= k <= trials", c, n, k)
	}
	return nil
}
