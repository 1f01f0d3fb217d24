#!/usr/bin/python3
"""Reference values for internal/stats, from scipy and statsmodels.

Run with Debian's python3 and its packages (apt-get install python3-scipy python3-statsmodels):

    /usr/bin/python3 internal/stats/testdata/reference.py > internal/stats/testdata/reference.json

The Go test (reference_test.go) reads reference.json and needs no python. Every data set is written into the JSON
with its inputs, so the Go side never regenerates them. Floats are written with repr (shortest round trip), so the
Go side reads exactly the numbers python computed.

scipy 1.10's Student t quantile (t.isf, t.interval) is accurate to about 1e-9 only: the JSON keeps scipy's values
and, beside them, the quantile polished by Newton steps on scipy's t.sf (checked against mpmath where installed).

Where two independent computations exist, the script checks that they agree and fails otherwise:
  - the exact sign-flip p-values: scipy.stats.permutation_test (permutation_type="samples", every pattern) against
    a brute-force enumeration in numpy, and on integer (lattice) data against an exact count of sign patterns by
    dynamic programming over integer sums with python's unbounded integers;
  - McNemar's p-values and I_{1/2}(a, b) for whole a, b: statsmodels and scipy against exact sums of binomial
    coefficients in python integers (written beside them as "exact": scipy's incomplete beta function drifts by
    about 1e-10 at a = 50,000, the exact sums do not).
"""

import json
import sys
from fractions import Fraction
from math import comb

import numpy as np
import scipy
import scipy.special
import scipy.stats
import statsmodels
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

try:  # python3-mpmath (Debian installs it with python3-sympy): an independent check of the t quantiles
    import mpmath
except ImportError:
    mpmath = None


def wilson():
    cases = [
        (0, 10, 0.95), (10, 10, 0.95), (1, 1, 0.95), (0, 1, 0.95), (8, 10, 0.95), (40, 50, 0.95),
        (37, 50, 0.90), (37, 50, 0.99), (123, 1000, 0.95), (999, 1000, 0.999), (5, 7, 0.5),
        (50000, 100000, 0.95), (3, 100000, 0.95), (17, 20, 0.8),
    ]
    out = []
    for count, nobs, level in cases:
        low, high = proportion_confint(count, nobs, alpha=1 - level, method="wilson")
        out.append({"successes": count, "n": nobs, "level": level, "low": float(low), "high": float(high)})
    return out


def mcnemar_cases():
    # (pass -> fail, fail -> pass): the table is [[both pass, pass->fail], [fail->pass, both fail]].
    cases = [
        (0, 0), (1, 0), (0, 1), (5, 5), (9, 2), (2, 9), (10, 0), (0, 10), (30, 12), (12, 30), (100, 80),
        (500, 430), (1000, 1100), (3, 17), (17, 3), (7, 6), (2500, 2350), (20000, 19500),
    ]
    out = []
    for b, c in cases:
        table = [[40, b], [c, 10]]
        two = float(mcnemar(table, exact=True).pvalue)
        n = b + c
        worse = 1.0 if n == 0 else float(scipy.stats.binomtest(b, n, 0.5, alternative="greater").pvalue)
        exact_worse = float(binomial_half_tail(n, b))
        exact_two = min(1.0, float(2 * (1 - binomial_half_tail(n, min(b, c) + 1))))
        check(abs(worse - exact_worse) <= 1e-9 * exact_worse, f"binomtest({b}, {n}) {worse} != exact {exact_worse}")
        check(abs(two - exact_two) <= 1e-9 * exact_two, f"mcnemar({b}, {c}) {two} != exact {exact_two}")
        out.append({"pass_to_fail": b, "fail_to_pass": c, "two_sided": two, "worse": worse,
                    "exact_two_sided": exact_two, "exact_worse": exact_worse})
    return out


def binomial_half_tail(n, k):
    """P(X >= k) for X ~ Binomial(n, 1/2), exactly: a sum of binomial coefficients in python integers."""
    if k <= 0:
        return Fraction(1)
    coef, total = 1, 0
    for j in range(n + 1):
        if j >= k:
            total += coef
        coef = coef * (n - j) // (j + 1)
    return Fraction(total, 2**n)


def betainc():
    cases = [
        (0.5, 0.5, 0.3), (2, 3, 0.4), (5, 1.5, 0.9), (1, 1, 0.25), (10, 10, 0.5), (30, 0.5, 0.99),
        (0.5, 30, 0.01), (100, 200, 0.3), (2500, 2501, 0.5), (50000, 50001, 0.5), (49000, 51001, 0.5),
        (50000, 0.5, 0.99995), (4.5, 0.5, 0.2), (1e-3, 2, 0.5),
    ]
    out = []
    for a, b, x in cases:
        entry = {"a": a, "b": b, "x": x, "value": float(scipy.special.betainc(a, b, x))}
        if x == 0.5 and a == int(a) and b == int(b):
            # I_{1/2}(a, b) = P(X >= a) for X ~ Binomial(a+b-1, 1/2): exact.
            entry["exact"] = float(binomial_half_tail(int(a + b - 1), int(a)))
            check(abs(entry["value"] - entry["exact"]) <= 1e-9 * entry["exact"], f"betainc({a}, {b}, 0.5) far from exact")
        out.append(entry)
    return out


def t_isf(q, df):
    """Student's t upper quantile to full double precision. scipy 1.10's t.isf (cephes stdtrit) is accurate to
    about 1e-9 only, while its t.sf is accurate to the last digits: Newton steps on t.sf from t.isf's value polish
    it, and mpmath (40 digits), where installed, checks the result."""
    x = float(scipy.stats.t.isf(q, df))
    for _ in range(4):
        x += (float(scipy.stats.t.sf(x, df)) - q) / float(scipy.stats.t.pdf(x, df))
    check(abs(x - float(scipy.stats.t.isf(q, df))) <= 1e-7 * x, f"t.isf({q}, {df}) polish moved too far")
    if mpmath is not None:
        with mpmath.workdps(40):
            tail = lambda t: mpmath.betainc(mpmath.mpf(df) / 2, mpmath.mpf(1) / 2, 0, df / (df + t * t), regularized=True) / 2
            exact = mpmath.findroot(lambda t: tail(t) - mpmath.mpf(q), mpmath.mpf(x))
            check(abs(x - float(exact)) <= 1e-13 * x, f"t.isf({q}, {df}): {x} != mpmath {exact}")
    return x


def t_quantiles():
    out = []
    for df in [1, 2, 3, 4, 5, 9, 10, 29, 30, 49, 99, 999, 99999]:
        for q in [0.25, 0.05, 0.025, 0.005, 0.0005, 1e-6]:
            out.append({"q": q, "df": df, "value": t_isf(q, df), "scipy_isf": float(scipy.stats.t.isf(q, df))})
    return out


def t_intervals(rng):
    sets = [
        ("two values", [0.25, 0.75], 0.95),
        ("scores", list(rng.uniform(0, 1, 12)), 0.95),
        ("scores 90%", list(rng.uniform(0, 1, 12)), 0.90),
        ("pass rates", [c / 5 for c in rng.binomial(5, 0.8, 50)], 0.95),
        ("large mean", list(1e6 + rng.normal(0, 1, 30)), 0.99),
        ("many", list(rng.normal(0.6, 0.2, 5000)), 0.95),
    ]
    out = []
    for name, values, level in sets:
        v = np.asarray(values, dtype=np.float64)
        mean = float(np.mean(v))
        sem = float(scipy.stats.sem(v))
        low, high = scipy.stats.t.interval(level, len(v) - 1, loc=mean, scale=sem)
        out.append({"name": name, "values": [float(x) for x in v], "level": level, "mean": mean,
                    "low": float(low), "high": float(high), "half_width": t_isf((1 - level) / 2, len(v) - 1) * sem})
    return out


def pass_k():
    cases = [
        (1, 0, 1), (1, 1, 1), (5, 0, 1), (5, 5, 5), (5, 3, 1), (5, 3, 2), (5, 3, 5), (5, 4, 5), (10, 7, 3),
        (100, 37, 10), (200, 1, 200), (200, 199, 1), (200, 199, 200), (1000, 500, 50), (20, 19, 20),
        (3, 2, 3), (3, 1, 2),
    ]
    out = []
    for n, c, k in cases:
        at = 1 - Fraction(comb(n - c, k), comb(n, k))
        hat = Fraction(comb(c, k), comb(n, k))
        out.append({"n": n, "c": c, "k": k, "pass_at_k": float(at), "pass_hat_k": float(hat)})
    return out


def mean_diff(x, y, axis):
    return np.mean(x - y, axis=axis)


def scipy_sign_flip(baseline, current):
    """scipy's exact paired permutation test on the nonzero pairs (zeros change no p-value, and scipy would
    enumerate their flips too)."""
    b = np.asarray(baseline, dtype=np.float64)
    c = np.asarray(current, dtype=np.float64)
    keep = (c - b) != 0
    b, c = b[keep], c[keep]
    res = {}
    for alt in ["less", "two-sided"]:
        r = scipy.stats.permutation_test((c, b), mean_diff, permutation_type="samples", vectorized=True,
                                         n_resamples=np.inf, alternative=alt, batch=1 << 16)
        res[alt] = float(r.pvalue)
    return res


def brute_sign_flip(diffs):
    """Every sign pattern of the nonzero differences, in numpy; ties within the same relative 1e-14 as scipy."""
    d = np.asarray([x for x in diffs if x != 0], dtype=np.float64)
    n = len(d)
    observed = d.sum()
    gamma = max(1e-14, abs(1e-14 * observed))
    less = greater = 0
    chunk = 1 << 14
    for start in range(0, 2**n, chunk):
        patterns = np.arange(start, min(start + chunk, 2**n))
        signs = 1 - 2 * ((patterns[:, None] >> np.arange(n)[None, :]) & 1)
        sums = (signs * np.abs(d)[None, :]).sum(axis=1)
        less += int(np.sum(sums <= observed + gamma))
        greater += int(np.sum(sums >= observed - gamma))
    less, greater = Fraction(less, 2**n), Fraction(greater, 2**n)
    return {"less": float(less), "two-sided": float(min(Fraction(1), 2 * min(less, greater)))}


def lattice_sign_flip(numerators):
    """Exact sign-flip p-values of integer differences: the number of sign patterns with each sum, by dynamic
    programming with python's unbounded integers, so the counts are exact."""
    counts = {0: 1}
    for m in numerators:
        if m == 0:
            continue
        nxt = {}
        for s, k in counts.items():
            for v in (abs(m), -abs(m)):
                nxt[s + v] = nxt.get(s + v, 0) + k
        counts = nxt
    total = sum(counts.values())
    observed = sum(numerators)
    less = Fraction(sum(k for s, k in counts.items() if s <= observed), total)
    greater = Fraction(sum(k for s, k in counts.items() if s >= observed), total)
    return {"less": float(less), "two-sided": float(min(Fraction(1), 2 * min(less, greater)))}


def mitm_sign_flip(diffs):
    """Exact sign-flip p-values of float differences by meeting in the middle: the 2^(n/2) sums of each half,
    one half sorted, counted with binary search."""
    d = np.abs(np.asarray([x for x in diffs if x != 0], dtype=np.float64))
    observed = float(np.sum([x for x in diffs if x != 0]))
    h = len(d) // 2

    def sums(part):
        k = len(part)
        signs = 1 - 2 * ((np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1)
        return (signs * part[None, :]).sum(axis=1)

    left, right = sums(d[:h]), np.sort(sums(d[h:]))
    gamma = max(1e-14, abs(1e-14 * observed))
    less = np.searchsorted(right, observed + gamma - left, side="right").sum()
    greater = (len(right) - np.searchsorted(right, observed - gamma - left, side="left")).sum()
    total = 2 ** len(d)
    return {"less": float(Fraction(int(less), total)), "two-sided": float(min(Fraction(1), 2 * min(Fraction(int(less), total), Fraction(int(greater), total))))}


def check(ok, what):
    if not ok:
        sys.exit("reference.py: cross-check failed: " + what)


def agree(a, b, what):
    for alt in ["less", "two-sided"]:
        check(abs(a[alt] - b[alt]) <= 1e-12 * max(abs(b[alt]), 1e-300), f"{what} {alt}: {a[alt]} != {b[alt]}")


def sign_flip(rng):
    out = []

    def scores(n, shift):
        base = rng.uniform(0, 1, n)
        cur = np.clip(base + rng.normal(shift, 0.2, n), 0, 1)
        return [float(x) for x in base], [float(x) for x in cur]

    def trials(n, pb, pc, t):
        return ([int(x) for x in rng.binomial(t, pb, n)], [int(x) for x in rng.binomial(t, pc, n)])

    # Float scores, distinct magnitudes: scipy exact, checked by brute force.
    for name, n, shift in [("scores n=8", 8, -0.05), ("scores n=12 drop", 12, -0.15), ("scores n=16", 16, 0.02),
                           ("scores n=20 drop", 20, -0.08)]:
        b, c = scores(n, shift)
        s = scipy_sign_flip(b, c)
        agree(s, brute_sign_flip([y - x for x, y in zip(b, c)]), name + " scipy vs brute force")
        out.append({"name": name, "baseline": b, "current": c, "less": s["less"], "two_sided": s["two-sided"],
                    "method": "scipy.stats.permutation_test, every pattern; brute force agrees"})

    # Pass rates over N trials (multiples of 1/N, many ties and zeros): exact counts over integer sums; scipy on the
    # nonzero pairs where 2^nonzero is small enough.
    for name, n, pb, pc, t in [("pass rates 30 cases N=5", 30, 0.8, 0.7, 5), ("pass rates 50 cases N=5", 50, 0.8, 0.8, 5),
                                ("pass rates 50 cases N=5 drop", 50, 0.8, 0.65, 5), ("pass rates 24 cases N=3", 24, 0.6, 0.6, 3),
                                ("pass rates 400 cases N=5", 400, 0.8, 0.78, 5), ("pass rates 2000 cases N=5", 2000, 0.8, 0.79, 5)]:
        cb, cc = trials(n, pb, pc, t)
        nums = [y - x for x, y in zip(cb, cc)]
        exact = lattice_sign_flip(nums)
        b = [x / t for x in cb]
        c = [y / t for y in cc]
        method = "exact counts over integer sums (python integers)"
        if sum(1 for m in nums if m != 0) <= 20:
            agree(scipy_sign_flip(b, c), exact, name + " scipy vs integer counts")
            method += "; scipy.stats.permutation_test agrees"
        out.append({"name": name, "baseline": b, "current": c, "less": exact["less"], "two_sided": exact["two-sided"],
                    "method": method})

    # Pass/fail with one trial: the sign-flip test is McNemar's one-sided exact test.
    for name, n, pb, pc in [("pass/fail 60 cases", 60, 0.8, 0.7), ("pass/fail 1000 cases", 1000, 0.8, 0.78)]:
        cb, cc = trials(n, pb, pc, 1)
        exact = lattice_sign_flip([y - x for x, y in zip(cb, cc)])
        out.append({"name": name, "baseline": [float(x) for x in cb], "current": [float(x) for x in cc],
                    "less": exact["less"], "two_sided": exact["two-sided"],
                    "method": "exact counts over integer sums (python integers)"})

    # Float scores beyond the exact bound: meeting in the middle, checked by brute force on a smaller set.
    b, c = scores(14, 0.0)
    agree(mitm_sign_flip([y - x for x, y in zip(b, c)]), brute_sign_flip([y - x for x, y in zip(b, c)]),
          "meet in the middle vs brute force")
    for name, n, shift in [("scores n=30 drop", 30, -0.06), ("scores n=32", 32, 0.0)]:
        b, c = scores(n, shift)
        e = mitm_sign_flip([y - x for x, y in zip(b, c)])
        out.append({"name": name, "baseline": b, "current": c, "less": e["less"], "two_sided": e["two-sided"],
                    "method": "exact, meeting in the middle (2^15 sums a side)"})
    return out


def bootstrap(rng):
    sets = [
        ("pass-rate differences 50 cases N=5", [float(x) for x in (rng.binomial(5, 0.75, 50) - rng.binomial(5, 0.8, 50)) / 5]),
        ("score differences 200 cases", [float(x) for x in rng.normal(-0.03, 0.15, 200)]),
        ("skewed 40 cases", [float(x) for x in rng.exponential(1.0, 40)]),
    ]
    out = []
    for name, values in sets:
        v = np.asarray(values)
        r = scipy.stats.bootstrap((v,), np.mean, n_resamples=99999, method="percentile", confidence_level=0.95,
                                  random_state=np.random.default_rng(20240601))
        out.append({"name": name, "values": values, "level": 0.95, "resamples": 99999,
                    "low": float(r.confidence_interval.low), "high": float(r.confidence_interval.high),
                    "standard_error": float(np.std(v, ddof=1) / np.sqrt(len(v)))})
    return out


def main():
    rng = np.random.default_rng(40)
    ref = {
        "generator": "internal/stats/testdata/reference.py",
        "versions": {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
                     "statsmodels": statsmodels.__version__,
                     "mpmath": mpmath.__version__ if mpmath is not None else "not installed"},
        "wilson": wilson(),
        "mcnemar": mcnemar_cases(),
        "betainc": betainc(),
        "t_quantile": t_quantiles(),
        "t_interval": t_intervals(rng),
        "pass_k": pass_k(),
        "sign_flip": sign_flip(rng),
        "bootstrap": bootstrap(rng),
    }
    # One line per entry: the file stays readable and its diffs small.
    parts = []
    for key, value in ref.items():
        if isinstance(value, list):
            body = ",\n".join("  " + json.dumps(v) for v in value)
            parts.append(f" {json.dumps(key)}: [\n{body}\n ]")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value)}")
    sys.stdout.write("{\n" + ",\n".join(parts) + "\n}\n")


if __name__ == "__main__":
    main()
