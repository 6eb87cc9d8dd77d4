"""Build result rows: provenance + cell columns, filled in by whoever ran (or could not run) it."""

from __future__ import annotations

import datetime as _dt
import functools
import subprocess
from pathlib import Path

from farm import __version__
from farm.cells import Cell
from kernels.stage import Measured

REPO_ROOT = Path(__file__).resolve().parents[2]
COMMIT_ENV = "GEMM_FARM_GIT_COMMIT"  # the commit, for workers whose copy of the repo has no .git


@functools.lru_cache(maxsize=1)
def git_commit() -> str:
    """The farm code's commit (+ '-dirty' when modified); 'unknown' outside a git checkout.

    Under `ray job submit` the working dir is copied without .git: the driver passes its
    own commit to workers through GEMM_FARM_GIT_COMMIT.
    """
    import os

    if env := os.environ.get(COMMIT_ENV):
        return env
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def cell_row(device: dict, stage: Measured, cell: Cell, run_id: str, status: str, reason: str = "") -> dict:
    """A row with provenance and cell columns set; measurement columns left for the caller."""
    return {
        **device,
        "run_id": run_id,
        "repeat": cell.repeat,
        "timestamp": _dt.datetime.now(_dt.timezone.utc),
        "farm_version": __version__,
        "git_commit": git_commit(),
        "family": stage.family,
        "stage": stage.name,
        "walk": stage.walk,
        "stage_group": stage.group,
        "position": stage.position,
        "dtype": stage.dtype,
        "baseline": stage.baseline,
        "m": cell.m,
        "n": cell.n,
        "k": cell.k,
        "flops": stage.flops(cell.m, cell.n, cell.k),
        "status": status,
        "status_reason": reason,
    }
