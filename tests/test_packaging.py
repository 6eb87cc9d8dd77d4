"""What pyproject.toml declares matches what the code imports, and an installed package finds its plans.

Every third-party import of farm/, kernels/ and dashboard/ (inside functions too, and the modules named in
importlib.import_module calls) must be declared in the place its room needs: the farm's own in the core
dependencies, the GPU libraries in every CUDA extra, PyTorch and Triton in the torch extra, the dashboard's in
the core or the dashboard extra. Every core dependency is one the farm imports: nothing only the dashboard needs
weighs on every GPU host.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from farm.plan import PLANS, PlanError, load_plan, plan_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
FIRST_PARTY = {"farm", "kernels", "dashboard"}
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

# Import name (a module path prefix; the longest wins) -> its distributions.
PROVIDERS = {
    "altair": {"altair"},
    "cuda.bindings": {"cuda-bindings"},
    "cuda.pathfinder": {"cuda-pathfinder"},
    "cupy": {"cupy-cuda12x", "cupy-cuda13x"},
    "cupy_backends": {"cupy-cuda12x", "cupy-cuda13x"},
    "grpc": {"grpcio"},
    "numpy": {"numpy"},
    "nvmath": {"nvmath-python"},
    "pandas": {"pandas"},
    "pyarrow": {"pyarrow"},
    "pydantic": {"pydantic"},
    "pynvml": {"nvidia-ml-py"},
    "ray": {"ray"},
    "streamlit": {"streamlit"},
    "tomli": {"tomli"},
    "torch": {"torch"},
    "triton": {"triton"},
    "websockets": {"websockets"},
}
GPU = ("cupy", "cupy_backends", "cuda.bindings", "cuda.pathfinder", "nvmath")  # in every CUDA extra
CUDA_EXTRAS = ("cuda12", "cuda13")
OPTIONAL = {"torch": "torch", "triton": "torch"}  # import -> the extra that declares it


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~;\s]", requirement, maxsplit=1)[0].lower()


CORE = {_name(r) for r in PROJECT["dependencies"]}
EXTRAS = {extra: {_name(r) for r in reqs} for extra, reqs in PROJECT["optional-dependencies"].items()}


def _imported(tree: ast.AST) -> set[str]:
    """Module paths imported by a module's syntax tree: import statements and literal import_module/__import__."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names |= {f"{node.module}.{a.name}" for a in node.names}  # from cuda import pathfinder
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")
            and node.args
        ):
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                arg = arg.values[0]  # an f-string's literal start
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names.add(arg.value.rstrip("."))
    return names


def third_party_imports() -> dict[str, set[str]]:
    """Each third-party module path imported by farm/, kernels/ or dashboard/ -> the files that import it."""
    found: dict[str, set[str]] = {}
    for package in sorted(FIRST_PARTY):
        for path in sorted((ROOT / package).rglob("*.py")):
            for name in _imported(ast.parse(path.read_text())):
                top = name.split(".")[0]
                if top and top not in sys.stdlib_module_names and top not in FIRST_PARTY:
                    found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def _provider_key(module: str) -> str | None:
    keys = [k for k in PROVIDERS if module == k or module.startswith(k + ".")]
    return max(keys, key=len) if keys else None


def misdeclared(found: dict[str, set[str]]) -> list[str]:
    problems = []
    for module, files in sorted(found.items()):
        key = _provider_key(module)
        if key is None:
            problems.append(
                f"{module} (imported by {sorted(files)}): unknown; add its distribution to PROVIDERS "
                "and declare it in pyproject.toml"
            )
            continue
        dists = PROVIDERS[key]
        if key in GPU:
            missing = [e for e in CUDA_EXTRAS if not dists & EXTRAS[e]]
            if missing:
                problems.append(f"{module}: not declared in the extras {missing}")
        elif key in OPTIONAL:
            if not dists & EXTRAS[OPTIONAL[key]]:
                problems.append(f"{module}: not declared in the {OPTIONAL[key]} extra")
        elif any(not f.startswith("dashboard/") for f in files):
            if not dists & CORE:
                problems.append(f"{module} (imported by {sorted(files)}): not a core dependency")
        elif not dists & (CORE | EXTRAS["dashboard"]):
            problems.append(f"{module} (imported by {sorted(files)}): not declared in the dashboard extra")
    return problems


def test_every_third_party_import_is_declared_where_its_room_needs_it():
    problems = misdeclared(third_party_imports())
    assert not problems, "\n".join(problems)


def test_every_core_dependency_is_one_the_farm_imports():
    farm_dists = set()
    for module, files in third_party_imports().items():
        key = _provider_key(module)
        if key and any(not f.startswith("dashboard/") for f in files):
            farm_dists |= PROVIDERS[key]
    assert CORE - farm_dists == set(), "core dependencies farm/ and kernels/ never import (move them to an extra)"
    assert {"streamlit", "altair"} <= EXTRAS["dashboard"]


def test_the_check_sees_what_it_must():
    tree = ast.parse(
        "import os\nimport pandas as pd\nfrom cuda.bindings import driver\n"
        "def f(name):\n    import importlib\n    return importlib.import_module(f'nvmath.bindings.{name}')\n"
    )
    assert _imported(tree) == {"os", "pandas", "cuda.bindings.driver", "importlib", "nvmath.bindings"}
    assert misdeclared({"leftpad": {"farm/x.py"}})[0].startswith("leftpad")
    assert misdeclared({"altair": {"farm/cli.py"}}) == ["altair (imported by ['farm/cli.py']): not a core dependency"]
    assert misdeclared({"altair": {"dashboard/charts.py"}}) == []
    assert misdeclared({"torch": {"farm/measure/extra_baselines.py"}}) == []


def test_the_package_carries_the_repos_plans():
    assert PLANS.resolve() == (ROOT / "plans").resolve()  # farm/plans links to plans/ (copied)
    assert (
        "plans/*.toml"
        in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["farm"]
    )


@pytest.mark.parametrize("name", ["quick", "quick.toml", "plans/quick.toml"])
def test_a_shipped_plan_loads_by_name_from_any_folder(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert plan_file(name) == PLANS / "quick.toml"
    assert [s.name for s in load_plan(name).stages()] == ["cublas_fp32", "naive", "tiled"]


def test_a_plan_file_that_exists_wins_over_a_shipped_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quick.toml").write_text('kernels = ["naive"]\nsizes = [64]\n')
    assert [s.name for s in load_plan("quick.toml").stages()] == ["cublas_fp32", "naive"]


def test_a_missing_plan_names_the_shipped_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PlanError, match=r"plan file nowhere\.toml: not found \(shipped plans: .*default.*quick"):
        load_plan("nowhere.toml")
    with pytest.raises(PlanError, match="not found"):
        load_plan(tmp_path / "absent.toml")


def test_an_installed_package_ships_no_working_dir_to_a_cluster(tmp_path, monkeypatch):
    import farm.sweep

    monkeypatch.delenv("RAY_JOB_CONFIG_JSON_ENV_VAR", raising=False)
    assert farm.sweep.runtime_env()["working_dir"] == str(ROOT)  # a checkout travels to the workers
    monkeypatch.setattr(farm.sweep, "REPO_ROOT", tmp_path)  # site-packages: no pyproject.toml
    assert "working_dir" not in farm.sweep.runtime_env()
