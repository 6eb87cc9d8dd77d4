"""NVML field by field: every query the sampler makes may be unsupported or fail; the sampler goes on, the row
says which fields the GPU did not report, and the warm-up and throttle rules use what is there.

NVML is faked by patching pynvml's own functions (farm/cluster/emulated_geforce.py FakeNvml), on an emulated
RTX 4090, the card that reports every field, with one field taken away at a time.
"""

import dataclasses
import time

import pyarrow as pa
import pynvml
import pytest

from farm.cluster.emulated_geforce import CARDS, FakeNvml
from farm.data.schema import TELEMETRY_SCHEMA
from farm.data.throttle import SAMPLED_FIELDS, summarize_samples
from farm.measure.cell_timer import CellTimer, MeasureOptions
from farm.measure.stopping import WarmupRule
from farm.measure.telemetry import FIELDS, GIVE_UP_AFTER, NvmlSampler

RTX4090 = CARDS["NVIDIA GeForce RTX 4090"]
WHOLE = dataclasses.replace(RTX4090, fails_once=())  # every field answers


def _sampled(card, seconds: float = 0.2, loaded: bool = True):
    """(the sampler, its samples) after `seconds` of sampling every 5 ms on `card`, loaded or idle."""
    fake = FakeNvml(card, ramp_s=0.02)
    with fake.patcher():
        sampler = NvmlSampler(card.pci_bus_id, interval_s=0.005)
        fake.load(loaded)
        sampler.start()
        time.sleep(seconds)
        energy = sampler.energy_mj()
        samples = sampler.stop()
        alive = sampler._thread.is_alive()
        sampler.close()
    return sampler, samples, energy, alive


def test_every_field_is_reported_by_a_whole_card():
    sampler, samples, energy, alive = _sampled(WHOLE)
    assert alive and sampler.unreported == {} and energy is not None and sampler.max_sm_clock_mhz == 2520.0
    assert len(samples) >= 10 and all(x[f] is not None for x in samples for f in SAMPLED_FIELDS)
    assert summarize_samples(samples, sampler.max_sm_clock_mhz)["nvml_unreported"] == []


@pytest.mark.parametrize("field", FIELDS)
def test_an_unsupported_field_is_null_and_named_while_the_sampler_goes_on(field):
    sampler, samples, energy, alive = _sampled(dataclasses.replace(WHOLE, unsupported=(field,)))
    assert alive and len(samples) >= 10  # the thread did not die at its first sample
    assert sampler.unreported == {field: "not supported"}
    for other in SAMPLED_FIELDS:
        assert all((x[other] is None) == (other == field) for x in samples), other
    assert (energy is None) == (field == "energy_mj")
    assert (sampler.max_sm_clock_mhz is None) == (field == "max_sm_clock_mhz")
    summary = summarize_samples(samples[-5:], sampler.max_sm_clock_mhz, tuple(sampler.unreported))  # the clock ramped
    assert summary["nvml_unreported"] == [field]
    column = {
        "sm_clock_mhz": "sm_clock_median_mhz",
        "mem_clock_mhz": "mem_clock_median_mhz",
        "temp_c": "temp_max_c",
        "power_w": "power_mean_w",
        "reasons": "clock_event_reasons",
        "max_sm_clock_mhz": "low_clock_fraction",
    }
    low_clock_needs = ("sm_clock_mhz", "max_sm_clock_mhz")
    for f, col in column.items():
        assert (summary[col] is None) == (field in (low_clock_needs if f == "max_sm_clock_mhz" else (f,))), col
    # Throttling is still judged on what is there: the loaded 4090 is neither capped nor slow.
    assert summary["throttled_fraction"] == 0.0


@pytest.mark.parametrize("field", FIELDS)
def test_a_field_that_fails_once_is_null_in_that_sample_only(field):
    sampler, samples, energy, alive = _sampled(dataclasses.replace(WHOLE, fails_once=(field,)))
    assert alive and sampler.unreported == {}
    if field in SAMPLED_FIELDS:
        assert samples[0][field] is None and all(x[field] is not None for x in samples[1:])
        assert summarize_samples(samples, sampler.max_sm_clock_mhz)["nvml_unreported"] == []
    elif field == "energy_mj":
        assert energy is None and sampler.energy_mj is not None
    elif field == "power_limit_w":  # read at start; near_power_cap reads it again (test_the_power_cap_is_seen...)
        assert sampler.power_limit_w is None
    else:  # read once at start: that card's rows have no max clock, and say so
        assert sampler.max_sm_clock_mhz is None
        assert summarize_samples(samples, None)["nvml_unreported"] == ["max_sm_clock_mhz"]


HELD = dataclasses.replace(WHOLE, loaded_sm_clock_mhz=2200.0)  # loaded, held below its 2520 MHz


@pytest.mark.parametrize(
    "card, draw_mw, reasons, capped",
    [
        (HELD, 95_000, 0x0, False),  # 95 W of the 4090's 450: held down by something else
        (HELD, 420_000, 0x0, True),  # a mean draw of 93 % of the limit: a series alone may be held at it
        (HELD, 95_000, 0x4, True),  # the cap's own reason
        (WHOLE, 420_000, 0x4, False),  # at the maximum clock the cap binds no one
        (dataclasses.replace(HELD, fails_once=("power_limit_w",)), 420_000, 0x0, True),  # the limit read again
        (dataclasses.replace(HELD, unsupported=("power_limit_w",)), 420_000, 0x0, False),  # no limit: reasons only
        (dataclasses.replace(HELD, unsupported=("power_limit_w",)), 95_000, 0x4, True),
        (dataclasses.replace(WHOLE, unsupported=("sm_clock_mhz",)), 95_000, 0x4, True),  # no clock: power alone
    ],
)
def test_the_power_cap_is_seen_from_a_held_clock_and_its_reason_or_draw(monkeypatch, card, draw_mw, reasons, capped):
    """What decides whether a cell is timed in blocks (TimingConfig.cap_block_s): the samples since a time."""
    fake = FakeNvml(dataclasses.replace(card, loaded_reasons=reasons), ramp_s=0.02)
    with fake.patcher():
        monkeypatch.setattr(pynvml, "nvmlDeviceGetPowerUsage", lambda h: draw_mw)
        sampler = NvmlSampler(card.pci_bus_id, interval_s=0.005)
        fake.load(True)
        time.sleep(0.05)  # the clock ramps to its loaded value in 20 ms
        began = time.perf_counter()
        sampler.start()
        time.sleep(0.05)
        seen = sampler.near_power_cap(began, 0.9)
        sampler.close()
    assert seen is capped
    assert sampler.near_power_cap(time.perf_counter() + 1, 0.9) is False  # no samples since then


def test_a_field_failing_every_time_is_given_up_after_ten(monkeypatch):
    fake = FakeNvml(WHOLE)
    with fake.patcher():
        monkeypatch.setattr(
            pynvml,
            "nvmlDeviceGetTemperature",
            lambda h, s: (_ for _ in ()).throw(pynvml.NVMLError(pynvml.NVML_ERROR_UNKNOWN)),
        )
        sampler = NvmlSampler(WHOLE.pci_bus_id)
        for i in range(GIVE_UP_AFTER):
            assert sampler.sample()["temp_c"] is None
            assert ("temp_c" in sampler.unreported) == (i == GIVE_UP_AFTER - 1)
        assert sampler.unreported["temp_c"] == f"failed {GIVE_UP_AFTER} times in a row (NVMLError_Unknown)"


def test_a_gpu_nvml_cannot_open_reports_nothing_and_the_sampler_still_runs(monkeypatch):
    fake = FakeNvml(WHOLE)
    with fake.patcher():
        monkeypatch.setattr(
            pynvml,
            "nvmlDeviceGetHandleByPciBusId",
            lambda bus: (_ for _ in ()).throw(pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)),
        )
        sampler = NvmlSampler(WHOLE.pci_bus_id, interval_s=0.005)
        sampler.start()
        time.sleep(0.05)
        samples = sampler.stop()
        sampler.close()
    assert set(sampler.unreported) == set(FIELDS) and samples
    assert summarize_samples(samples, sampler.max_sm_clock_mhz, tuple(sampler.unreported))["nvml_unreported"] == sorted(
        FIELDS
    )


def test_throttle_flags_judge_what_was_reported():
    def s(reasons, clock):
        return {"reasons": reasons, "sm_clock_mhz": clock, "mem_clock_mhz": None, "temp_c": None, "power_w": None}

    no_reasons = summarize_samples([s(None, 1900), s(None, 1000)], 1980.0)
    assert no_reasons["throttle_power"] is None and no_reasons["clock_event_names"] is None
    assert no_reasons["low_clock_fraction"] == 0.5 and no_reasons["throttled_fraction"] == 0.5  # the clock still tells
    no_clock = summarize_samples([s(0x4, None), s(0, None)], None, ("max_sm_clock_mhz",))
    assert no_clock["throttle_power"] is True and no_clock["low_clock_fraction"] is None
    assert no_clock["throttled_fraction"] == 0.5 and no_clock["sm_clock_median_mhz"] is None
    assert no_clock["nvml_unreported"] == ["max_sm_clock_mhz", "mem_clock_mhz", "power_w", "sm_clock_mhz", "temp_c"]
    blind = summarize_samples([s(None, None)], 1980.0)
    assert blind["throttled_fraction"] is None and blind["throttle_idle"] is None


def test_no_clock_reading_means_a_fixed_warmup_with_its_reason():
    rule = WarmupRule(min_s=0.05, fixed_s=0.5)
    assert rule.decide(0.3, None, telemetry=True) is None
    assert rule.decide(0.5, None, telemetry=True) == "fixed_no_clock"
    assert rule.decide(0.05, None) == "no_telemetry"  # sampling off: as before
    sampler, _, _, _ = _sampled(dataclasses.replace(WHOLE, unsupported=("sm_clock_mhz",)), seconds=0.05)
    assert sampler.recent_sm_clocks(1.0)[0] is None


def test_without_clock_event_reasons_the_gpu_is_never_seen_busy():
    with_reasons, _, _, _ = _sampled(WHOLE, seconds=0.1)
    without, _, _, _ = _sampled(dataclasses.replace(WHOLE, unsupported=("reasons",)), seconds=0.1)
    assert with_reasons.recent_sm_clocks(1.0)[1] is True
    clocks, busy = without.recent_sm_clocks(1.0)
    assert clocks and busy is False  # so warm-up never ends as 'clock_settled_earlier'
    assert WarmupRule().decide(0.0, clocks, busy) is None


def test_raw_samples_keep_a_missing_field_null_in_the_telemetry_table():
    fake = FakeNvml(dataclasses.replace(WHOLE, unsupported=("power_w", "temp_c", "sm_clock_mhz")))
    with fake.patcher():
        timer = CellTimer(MeasureOptions(), WHOLE.pci_bus_id, WHOLE.l2_bytes)
        sample = timer.sampler.sample()
    timing = type("T", (), {"warmup_window": (0.0, 0.0)})()
    raw = timer._raw([{**sample, "series": "kernel"}], timing)
    assert raw[0]["power_w"] is None and raw[0]["temp_c"] is None and raw[0]["sm_clock_mhz"] is None
    keys = {"run_id": "r", "gpu_model": "m", "gpu_uuid": "u", "stage": "s", "m": 1, "n": 1, "k": 1, "repeat": 0}
    table = pa.Table.from_pylist([{**keys, **raw[0]}], schema=TELEMETRY_SCHEMA)
    assert table.column("power_w").null_count == 1 and table.column("mem_clock_mhz").null_count == 0
