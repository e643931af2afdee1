"""``vllm-spec-lint rules`` and ``explain``: the rules' documentation."""

from __future__ import annotations

import argparse
import sys

from vllm_spec_lint.core.settings import (
    Config,
)
from vllm_spec_lint.faces.cli_options import EXIT_CLEAN, EXIT_ERROR


def command_rules(args: argparse.Namespace, config: Config) -> int:
    from vllm_spec_lint.faces.rule_docs import markdown_table, rule_docs

    if args.output_format == "markdown":
        sys.stdout.write(markdown_table())
    else:
        for doc in rule_docs():
            print(f"{doc.code}  {doc.name:<36} {doc.summary}")
    return EXIT_CLEAN


def command_explain(args: argparse.Namespace, config: Config) -> int:
    from vllm_spec_lint.faces.rule_docs import rule_doc

    doc = rule_doc(args.code)
    if doc is None:
        print(f"error: unknown rule code or name: {args.code}", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(doc.explain())
    return EXIT_CLEAN
