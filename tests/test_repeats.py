"""Adaptive repeats: the decision (farm/cluster/repeats.py) and the plan fields that bound it."""

import pyarrow as pa
import pytest

from farm.cells import Cell
from farm.cluster.repeats import AdaptiveRepeats, mean_noise
from farm.plan import PlanError, load_plan


def _rows(*medians, status="ok"):
    return pa.RecordBatch.from_pylist([{"status": status, "median_ms": m} for m in medians])


def test_a_noisy_cell_gets_repeats_up_to_the_most_a_quiet_one_none():
    rep = AdaptiveRepeats(planned=3, most=5, target=0.0025)
    added = []
    for r in range(3):  # the planned repeats, one row each
        added += rep.more(
            "q",
            [(Cell("a", 1, 1, 1, r), 2.0), (Cell("b", 1, 1, 1, r), 3.0)],
            _rows(1.0 + 0.0001 * r, 1.0 + 0.02 * (r % 2)),
        )
    assert added == [(Cell("b", 1, 1, 1, 3), 3.0)], "only the noisy cell, priced like its first repeats"
    more = rep.more("q", added, _rows(1.02))
    assert more == [(Cell("b", 1, 1, 1, 4), 3.0)]
    assert rep.more("q", more, _rows(1.0)) == [], "at most 5 repeats"


def test_no_extra_repeat_before_every_planned_one_is_back_nor_for_a_skipped_cell_nor_without_max():
    rep = AdaptiveRepeats(planned=2, most=4, target=0.0025)
    assert rep.more("q", [(Cell("a", 1, 1, 1, 0), 1.0)], _rows(1.0)) == []  # repeat 1 still out
    assert rep.more("q", [(Cell("s", 1, 1, 1, r), 1.0) for r in range(2)], _rows(None, None, status="skipped")) == []
    off = AdaptiveRepeats(planned=2, most=0, target=0.0025)
    assert off.more("q", [(Cell("a", 1, 1, 1, r), 1.0) for r in range(2)], _rows(1.0, 1.1)) == []
    assert mean_noise([0.0]) == float("inf") and mean_noise([0.0, 0.02]) == pytest.approx(0.01)


def test_plan_fields(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('sizes = [256]\nkernels = ["naive"]\nrepeats = 3\nmax_repeats = 6\nrepeat_noise = 0.002\n')
    plan = load_plan(p)
    assert (plan.repeats, plan.max_repeats, plan.repeat_noise) == (3, 6, 0.002)
    assert load_plan(None, sizes=["256"], kernels=["naive"]).max_repeats == 0
    with pytest.raises(PlanError, match="max_repeats .2. must be at least repeats .3."):
        load_plan(None, sizes=["256"], kernels=["naive"], repeats=3, max_repeats=2)


def test_a_paired_cell_is_one_outcome_its_repeats_its_pairs():
    """pair_outcomes: either arm's failure is the cell's; adaptive repeats read the pairs' ratios B/A, so a cell whose
    arms move together (a power state both share) gets no extra pair, one whose pairs disagree does."""
    from farm.cluster.repeats import pair_outcomes

    def arm(rows):
        return pa.RecordBatch.from_pylist(
            [
                {"pair": p, "status": s, "status_reason": None if s == "ok" else "why", "median_ms": m}
                for p, s, m in rows
            ]
        )

    a = arm([("x/0", "ok", 1.0), ("y/0", "ok", 2.0), ("z/0", "ok", 1.0)])
    b = arm([("y/0", "ok", 2.2), ("x/0", "ok", 1.01), ("z/0", "failed_verification", None)])
    outcomes, judged = pair_outcomes(a, [b])
    assert outcomes.column("status").to_pylist() == ["ok", "ok", "failed_verification"]
    assert outcomes.column("status_reason").to_pylist()[2] == "arm b: why"
    assert judged.column("median_ms").to_pylist() == pytest.approx([1.01, 1.1, None], nan_ok=True)
    rep = AdaptiveRepeats(planned=2, most=4, target=0.0025)
    cells = [(Cell("steady", 1, 1, 1, r), 1.0) for r in range(2)] + [(Cell("noisy", 1, 1, 1, r), 1.0) for r in range(2)]
    # the steady cell's arms move 10 % together between its pairs; the noisy one's pairs are 2 % apart
    a = arm([("s/0", "ok", 1.0), ("s/1", "ok", 1.1), ("n/0", "ok", 1.0), ("n/1", "ok", 1.0)])
    b = arm([("s/0", "ok", 1.0), ("s/1", "ok", 1.1), ("n/0", "ok", 1.0), ("n/1", "ok", 1.02)])
    assert rep.more("q", cells, pair_outcomes(a, [b])[1]) == [(Cell("noisy", 1, 1, 1, 2), 1.0)]
