"""Write the generated documentation pages (docs/rules/CODE.md,
docs/hierarchy.md) from the rule modules and the built-in hierarchy.
tests/test_docs.py regenerates them and compares: run this after changing a
rule's docstring or examples."""

from __future__ import annotations

from pathlib import Path

from vllm_spec_lint.faces.rule_docs import documentation_pages

DOCS = Path(__file__).resolve().parent.parent / "docs"


def main() -> None:
    for relative, text in documentation_pages().items():
        path = DOCS / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(path.relative_to(DOCS.parent))


if __name__ == "__main__":
    main()
