"""Reading datasets: noise-aware comparisons, reports, the counters that moved, the cross-check of the baselines."""
