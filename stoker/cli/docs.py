"""``stoker docs``: the operator reference (docs/operators.md), written from the registry.

One section per operator family, one entry per public operator: its devices, inputs,
arguments (type, default, range or choices, per-sample), outputs, DALI's older names for it
and its arguments, and where stoker differs from DALI: the bullets of the README's
"Differences from DALI, on purpose" that name the operator, and its row of the README's
table of GPU differences. The same input gives the same bytes (names sorted, no dates), so
a test can tell a stale file: tests/cli/test_docs.py.
"""

from __future__ import annotations

import importlib
import pathlib
import re
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "operators.md"
README = ROOT / "README.md"

_INTRO = """\
# stoker operators

Generated from stoker's operator registry by `stoker docs`; edit the schemas (or the
README's lists of differences), not this file. `tests/cli/test_docs.py` fails when it is
stale. `help(fn.<name>)` shows an operator's entry in Python.

Every operator also takes `seed`, `preserve`, `bytes_per_sample_hint`, `device` and
`name`. An argument marked *per-sample* also takes a DataNode holding one value per
sample; one marked *required* has no default.
"""


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _value(value: Any) -> str:
    from stoker import types

    if isinstance(value, types.DALIDataType | types.DALIImageType | types.DALIInterpType):
        return f"types.{value.name}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return repr(value)


def _argument(arg: Any) -> str:
    default = "*required*" if arg.required else f"`{_value(arg.default)}`"
    notes = []
    if arg.range is not None:
        lo, hi = arg.range
        notes.append(f"at least {lo}" if hi is None else f"at most {hi}" if lo is None
                     else f"in [{lo}, {hi}]")
    if arg.choices is not None:
        notes.append("one of " + ", ".join(f"`{_value(c)}`" for c in arg.choices))
    if arg.length is not None:
        notes.append(f"{arg.length} values" + (" (or one for all)" if arg.broadcast else ""))
    if arg.per_sample:
        notes.append("*per-sample*")
    doc = _cell(arg.doc) + (f" ({'; '.join(notes)})" if notes else "")
    return f"| `{arg.name}` | {arg.type} | {default} | {doc} |"


def readme_differences(readme: str) -> tuple[list, list]:
    """The README's records of differences from DALI: (operator names, text) for each
    bullet of "Differences from DALI, on purpose" and each row of the GPU table."""

    def names(text: str) -> set[str]:
        return set(re.findall(r"`(?:fn\.)?([a-z_][\w.]*)[`(]", text))

    section = readme.partition("## Differences from DALI, on purpose")[2].partition("\n## ")[0]
    bullets = []
    for item in re.split(r"\n(?=- )", section.strip()):
        if item.startswith("- "):
            bullets.append((names(item), " ".join(item[2:].split())))
    table = readme.partition("## GPU operators: tolerance against the CPU operators")[2]
    rows, last = [], set()
    for line in table.partition("\n## ")[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 2 or cells[0] in ("Operator", "---|---") or set(cells[0]) <= set("-|"):
            continue
        found = last if cells[0].startswith("the same") else names(cells[0])
        last = found
        # What the row says beyond the names ("nearest neighbour", "every other filter").
        rest = re.sub(r"^the same,?", "", re.sub(r"`[^`]*`", "", cells[0])).strip(" ,:")
        rows.append((found, f"{rest}: {cells[1]}" if rest else cells[1]))
    return bullets, rows


def _entry(schema: Any, old_names: list[str], bullets: list, rows: list) -> list[str]:
    lines = [f"### fn.{schema.name}", "", schema.doc.strip(), ""]
    outputs = schema.num_outputs if not callable(schema.num_outputs) else \
        "as many as its arguments ask for"
    lines.append(f"Devices: {', '.join(schema.devices)}. Outputs: {outputs}.")
    if old_names:
        lines.append("DALI's older names, which still work (and warn): "
                     + ", ".join(f"`fn.{n}`" for n in old_names) + ".")
    lines.append("")
    if schema.inputs:
        lines.append("Inputs:")
        lines.append("")
        for inp in schema.inputs:
            extra = " (optional)" if inp.optional else " (any number)" if inp.variadic else ""
            lines.append(f"- `{inp.name}`{extra}: {_cell(inp.doc)}")
        lines.append("")
    if schema.args:
        lines += ["| argument | type | default | meaning |", "| --- | --- | --- | --- |"]
        lines += [_argument(arg) for arg in schema.args]
        lines.append("")
    if schema.positional:
        lines += ["Also positional, after the inputs: "
                  + ", ".join(f"`{k}`" for k in schema.positional) + ".", ""]
    renamed = sorted(schema.renamed.items())
    if renamed:
        lines += ["DALI's older argument names: " + ", ".join(
            f"`{old}` (now `{new}`)" if new else f"`{old}` (accepted, ignored)"
            for old, new in renamed) + ".", ""]
    differences = [text for found, text in bullets if schema.name in found]
    if differences:
        lines += ["Differences from DALI (README):", ""]
        lines += [f"- {text}" for text in differences] + [""]
    gpu = [text for found, text in rows if schema.name in found]
    if gpu:
        lines += ["On the GPU, against the CPU operator (README): " + "; ".join(gpu) + ".", ""]
    return lines


def render() -> str:
    """docs/operators.md's text."""
    import stoker.fn  # noqa: F401  (registers every operator)
    from stoker.operators import FAMILIES
    from stoker.operators.machinery.aliases import FN_ALIASES
    from stoker.operators.machinery.registry import REGISTERED_BY, REGISTRY

    bullets, rows = readme_differences(README.read_text() if README.exists() else "")
    old_names: dict[str, list[str]] = {}
    for old, new in sorted(FN_ALIASES.items()):
        old_names.setdefault(new, []).append(old)
    out = [_INTRO]
    out.append("Families: " + ", ".join(f"[{f}](#{f})" for f in FAMILIES) + ".\n")
    for family in FAMILIES:
        doc = importlib.import_module(f"stoker.operators.{family}").__doc__ or ""
        names = sorted(n for n, m in REGISTERED_BY.items()
                       if m.startswith(f"stoker.operators.{family}.") and not n.startswith("_"))
        out += [f"## {family}", "", doc.strip().split("\n\n")[0], ""]
        places = [(what, f"{where}/{family}/") for what, where in (
            ("schemas", "stoker/operators"), ("CPU kernels", "stoker/kernels/cpu"),
            ("GPU kernels", "stoker/kernels/gpu"), ("tests", "tests"))]
        where = "; ".join(f"{what}: `{path}`" for what, path in places if (ROOT / path).is_dir())
        out += [where[0].upper() + where[1:] + ".", ""]
        if not names:
            out += ["No operators yet.", ""]
        else:
            out += ["Operators: " + ", ".join(
                f"[{n}](#fn{n.replace('.', '')})" for n in names) + ".", ""]
        for name in names:
            out += _entry(REGISTRY[name], old_names.get(name, []), bullets, rows)
    return "\n".join(out).rstrip() + "\n"


def run_docs(out: str | None = None, check: bool = False) -> int:
    path = pathlib.Path(out) if out else OUT
    text = render()
    if check:
        if not path.exists() or path.read_text() != text:
            print(f"stoker docs: {path} is stale; run `stoker docs` to rewrite it")
            return 1
        print(f"{path} is up to date")
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote {path} ({text.count(chr(10) + '### ')} operators)")
    return 0
