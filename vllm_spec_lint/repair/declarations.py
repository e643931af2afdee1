"""Declaring a family's layout property on the spec classes (the first half
of ``codemod layout-property``; repair/layout.py rewrites the tests).

The root gets the property with its documentation and ``False``; the anchor
and each companion override it with ``True``. Each goes at the end of its
class body, where vLLM keeps its own such properties (``has_layer_views``,
``uses_slot_mapping``), indented as that body is. A class that already
defines the name is left alone, so a second run adds nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from vllm_spec_lint.model.hierarchy import body_names


def property_docstring(members: list[str]) -> list[str]:
    """The root's docstring lines: what the property means and why it is
    there (what the class tests it replaces got wrong)."""
    import textwrap

    anchor, *companions = members
    verb = "has" if len(companions) == 1 else "have"
    why = (
        f"{' and '.join(companions)} {verb} this layout without subclassing "
        f"{anchor}: ask this property instead of testing for classes, so that "
        "a new class with the layout sets it once rather than joining every "
        "isinstance() check."
    )
    return [
        f"Whether this cache uses the {anchor} layout.",
        "",
        *textwrap.wrap(why, 72),
    ]


def declare_property(
    text: str,
    values: Mapping[str, bool],
    prop: str,
    docstring: list[str],
) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with ``prop`` declared on each top-level class of ``values``
    (class name: what it returns; the docstring goes on the one returning
    False), and the offsets of what was added."""
    tree = ast.parse(text)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    # After each class's last line (its last statement's end): the block.
    blocks: dict[int, str] = {}
    for name, value in values.items():
        node = classes.get(name)
        if node is None or prop in body_names(node):
            continue
        indent = " " * node.body[0].col_offset
        step = " " * (node.body[0].col_offset - node.col_offset)
        block = [f"{indent}@property", f"{indent}def {prop}(self) -> bool:"]
        if not value:
            body = indent + step
            block += [f'{body}"""{docstring[0]}']
            block += [f"{body}{line}" if line else "" for line in docstring[1:]]
            block += [f'{body}"""']
        block.append(f"{indent}{step}return {value}")
        blocks[node.end_lineno] = newline + newline.join(block) + newline
    out: list[str] = []
    added: list[tuple[int, int]] = []
    offset = 0
    for row, line in enumerate(lines, start=1):
        block = blocks.get(row)
        if block is not None and not line.endswith(("\n", "\r")):
            line += newline
        out.append(line)
        offset += len(line)
        if block is not None:
            out.append(block)
            added.append((offset, offset + len(block)))
            offset += len(block)
    return "".join(out), added
