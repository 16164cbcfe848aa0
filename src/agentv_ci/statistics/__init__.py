"""The statistics behind noise-aware verdicts (stdlib only; scipy cross-checks them in the tests).

- `descriptive`: mean, standard deviation, standard error.
- `fisher`: one-sided Fisher exact tests on two pass counts, and the smallest p-value their margins allow.
- `student_t`: Student's t distribution (tail probability, quantile), the beta quantile, AgentV's 95% table.
- `proportions`: Wilson and Clopper-Pearson intervals of a pass rate, Newcombe's of a difference of two.
- `family`: the error control over one run's comparisons (Tarone's trimmed family, Holm's step-down).
- `paired`: the suite-level paired comparison, the test as the unit (sign-flip randomization test).
- `regressions`: the one family of "worse than the baseline" tests that compare.py and bench/noise.py share.
- `sequential`: adaptive repeats' decision rule (when a test's verdict or comparison is decided).
"""
