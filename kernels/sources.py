"""Where kernel sources live, and the launch geometry a fixed kernel declares in its own .cu.

A kernel's threads and tile are written once. A fixed (non-template) kernel declares them in its .cu,
where its code uses them, as integer constants with these names:

  THREADS            threads per block (a 2-D block: THREADS_X and THREADS_Y)
  BM, BN             the tile of C one block computes (rows, columns): the grid covers C in these
  SMEM_BYTES         dynamic shared memory per block, in bytes (absent: none)
  CLUSTER            blocks per thread-block cluster along x (absent: 1)

A file with a second kernel of another geometry gives that kernel's a prefix (REDUCE_THREADS, ...).
`declared_launch` reads them into a Launch, so stages.py never repeats a number the .cu holds. A template
kernel takes its geometry as template arguments, which its family's stages.py writes in the kernel name.

Declare them as enumerators, `enum : int { THREADS = 256, BM = 128, ... };`: NVRTC keeps every
namespace-scope `constexpr int` in the module's data (.nv.global.init), so a new one would change the
CUBIN, while an enumerator leaves no trace. Older kernels' `constexpr int` declarations are read too.
The reader understands `enum ... { NAME = expression, ... };` and `constexpr int NAME = expression, ...;`
at any scope (namespaces are ignored, `ns::NAME` reads as NAME), over integer literals, names declared before in
the same file or in the headers it includes from kernels/common/, + - * / % << >> and parentheses. A source's own
declarations come first; a name it does not declare is looked up in those headers (each read on its own). A name declared twice in one file with
different values, or not declared, is an error when asked for.
"""

from __future__ import annotations

import ast
import functools
import operator
import re
from pathlib import Path

from kernels.stage import Launch

KERNELS_DIR = Path(__file__).resolve().parent
COMMON_INCLUDE_DIR = KERNELS_DIR / "common"

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_DECLARATION = re.compile(r"\bconstexpr\s+int\s+([^;{}]+);|\benum\b[^;{}()]*\{([^{}]*)\}")
_INCLUDE = re.compile(r'#include\s+"([^"]+)"')
_LITERAL_SUFFIX = re.compile(r"\b(\d+)[uUlL]+\b")
_QUALIFIER = re.compile(r"\b\w+::")
_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.floordiv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}


def _evaluate(expression: str, known: dict[str, int]) -> int | None:
    """The value of a C integer expression over `known` names, or None where it uses anything else."""
    try:
        tree = ast.parse(_QUALIFIER.sub("", _LITERAL_SUFFIX.sub(r"\1", expression.strip())), mode="eval").body
    except SyntaxError:
        return None

    def value(node: ast.AST) -> int | None:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            return known.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = value(node.operand)
            return None if v is None else -v
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            left, right = value(node.left), value(node.right)
            return None if left is None or right is None else _OPERATORS[type(node.op)](left, right)
        return None

    return value(tree)


def _declarators(text: str) -> list[str]:
    """'A = 1, B = (A, 2)' -> ['A = 1', 'B = (A, 2)']: split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _own_constants(text: str, included: dict[str, int | None]) -> dict[str, int | None]:
    """name -> value of the `constexpr int`s and enumerators of one file (None: declared twice with different values);
    `included`: the constants of the headers it includes, which its expressions may use."""
    values: dict[str, int | None] = {}
    for match in _DECLARATION.finditer(text):
        for declarator in _declarators(match.group(1) or match.group(2)):
            name, equals, expression = (p.strip() for p in declarator.partition("="))
            known = {k: v for k, v in {**included, **values}.items() if v is not None}
            value = _evaluate(expression, known) if equals else None
            if value is None:
                continue  # an expression over template parameters or other code: not a launch constant
            values[name] = value if values.get(name, value) == value else None
    return values


@functools.cache
def constants(path: Path) -> dict[str, int | None]:
    """The integer constants `path` declares, name -> value (None where ambiguous): its own, then those of the
    kernels/common/ headers it includes for names it does not declare itself. Each file is read on its own."""
    text = _COMMENT.sub("", path.read_text())
    included: dict[str, int | None] = {}
    for header in _INCLUDE.findall(text):
        if (COMMON_INCLUDE_DIR / header).is_file():
            for name, value in constants(COMMON_INCLUDE_DIR / header).items():
                included.setdefault(name, value)
    return {**included, **_own_constants(text, included)}


def declared(path: Path, name: str, default: int | None = None) -> int:
    """The value of the constant `name` declared in the kernel source `path` (or its common headers)."""
    found = constants(path)
    if name in found and found[name] is None:
        raise ValueError(f"{path.name} declares {name} more than once with different values")
    if name not in found:
        if default is None:
            raise ValueError(f"{path.name} declares no {name} (kernels/sources.py says what a launch reads)")
        return default
    return found[name]


def declared_launch(path: Path, kernel: str, prefix: str = "", **launch) -> Launch:
    """The launch of `kernel` with the threads, tile, dynamic shared memory and cluster `path` declares (names
    prefixed by `prefix`); `launch` gives the rest (args, splits, persistent)."""

    def get(name: str, default: int | None = None) -> int:
        return declared(path, prefix + name, default)

    threads = (get("THREADS_X"), get("THREADS_Y")) if prefix + "THREADS_X" in constants(path) else get("THREADS")
    return Launch(
        kernel, threads, get("BM"), get("BN"), dynamic_smem=get("SMEM_BYTES", 0), cluster=get("CLUSTER", 1), **launch
    )
