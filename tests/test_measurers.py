"""Plans are data: a plan or --measurer picks a measurer by name from a fixed registry, checked before Ray starts."""

import pytest

import farm.sweep
from farm.measure import measurers
from farm.plan import PlanError, load_plan


def test_the_default_is_the_real_gpu_measurer():
    plan = load_plan(sizes=[64])
    assert plan.measurer == "gpu"
    assert measurers.load(measurers.path_of(plan.measurer)).__name__ == "GpuMeasurer"


def test_a_registered_name_is_a_valid_plan_field():
    assert load_plan(sizes=[64], measurer="standin").measurer == "standin"  # no GPU: the tests' and farm simulate's
    assert measurers.path_of("standin") == "farm.cluster.standin:StandinMeasurer"


@pytest.mark.parametrize(
    "name, match",
    [
        ("gpu2", r"unknown|not a known measurer"),
        ("farm.cluster.standin:StandinMeasurer", "cannot give an import path"),
        ("os:system", "cannot give an import path"),
        ("farm.measure.gpu:GpuMeasurer", "cannot give an import path"),
        (42, "not a known measurer"),
    ],
)
def test_anything_else_is_one_plan_error_listing_the_valid_names(name, match):
    with pytest.raises(PlanError, match=match) as err:
        load_plan(sizes=[64], measurer=name)
    assert "valid: gpu, standin" in str(err.value)


def test_a_plan_file_cannot_name_code(tmp_path):
    plan = tmp_path / "evil.toml"
    plan.write_text('sizes = [64]\nmeasurer = "subprocess:Popen"\n')
    with pytest.raises(PlanError, match="cannot give an import path"):
        load_plan(plan)


def test_rejected_before_ray_starts(monkeypatch, caplog):
    started = []
    monkeypatch.setattr(farm.sweep, "connect", lambda address: started.append(address))
    assert farm.sweep.main(["--sizes", "64", "--measurer", "os:system"]) == 2
    assert started == []
    assert "valid: gpu, standin" in caplog.text


def test_the_fleet_resolves_names_only():
    with pytest.raises(KeyError, match="unknown measurer 'os:system'; valid: gpu, standin"):
        measurers.path_of("os:system")
