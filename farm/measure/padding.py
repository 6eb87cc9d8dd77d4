"""Any N for a stage whose kernels need N to be a multiple of its `pad_n_to` (walk D: a TMA tensor map's row stride
must be a multiple of 16 bytes, and B, K x N in 16 bits, has 2N: kernels/hopper_d/README.md, Tails).

For such an N the stage's launch sequence gains two launches of the harness's own (checks.cu): before the stage's
launches, `pad_columns` copies B into a K x P buffer (P = N rounded up to `pad_n_to`, columns N..P-1 zero); the
stage's launches then run unchanged at M x P x K on it into an M x P C; after them, `unpad_columns` copies the first N
columns of each row into the caller's M x N C (the padded C is poisoned with NaN once, so an element the stage never
writes fails the check as it would unpadded). All three run in the one callable the timer captures and replays, so
the copies' cost is in every timed launch, and the verification reads the caller's C; the baseline library gets the
unpadded layout as always. The row's status_reason says that the stage ran padded.
"""

from __future__ import annotations

from collections.abc import Callable

from kernels.stage import Measured


def padding_note(stage: Measured, n: int) -> str | None:
    """What an ok row of `stage` at N columns says about its padding (None where N runs as it is)."""
    padded = stage.padded_n(n)
    if padded == n:
        return None
    return (
        f"ran at N={padded}: B copied into a zero-padded K x {padded} buffer before the stage's launches and C out of "
        f"an M x {padded} one after them, by the harness's own kernels inside every timed launch (farm/measure/padding.py)"
    )


def padded_launcher(
    stage: Measured, checks, launcher: Callable[[dict, int, int, int], Callable[[], None]], operands: dict, m, n, k
) -> Callable[[], None]:
    """A no-argument callable running the stage at m x n x k on `operands` (A, B, C and the rest, as
    `launcher(operands, m, n, k)` takes them): the launcher's own callable where N needs no padding, else the pad of
    B, the launches at the padded N, and the unpad of C (`checks`: the harness's loaded checks.cu)."""
    padded = stage.padded_n(n)
    if padded == n:
        return launcher(operands, m, n, k)
    import cupy

    b, c = operands["B"], operands["C"]
    wide_b = cupy.empty((k, padded), dtype=b.dtype)  # every element written by each pad, zeros too
    wide_c = cupy.empty((m, padded), dtype=c.dtype)
    checks.poison(wide_c)  # as the caller's C is: an element no launch writes reaches C as NaN
    run = launcher({**operands, "B": wide_b, "C": wide_c}, m, padded, k)

    def padded_run() -> None:
        checks.pad_columns(b, wide_b)
        run()
        checks.unpad_columns(wide_c, c)

    return padded_run
