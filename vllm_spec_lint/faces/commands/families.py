"""``vllm-spec-lint families``: the families, their stand-ins, the
hierarchy they were read from, and (``--discover``) the structural twins."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from vllm_spec_lint.core.settings import (
    Config,
)
from vllm_spec_lint.faces.cli_options import EXIT_CLEAN


def command_families(args: argparse.Namespace, config: Config) -> int:
    import json

    from vllm_spec_lint.edges.discovery import iter_python_files
    from vllm_spec_lint.edges.hierarchy_sources import load_hierarchy
    from vllm_spec_lint.edges.spec_classes import (
        discover,
        spec_hierarchy,
        with_spec_classes,
    )
    from vllm_spec_lint.model.hierarchy import short_name

    warnings: list[str] = []
    files = [f for f in iter_python_files(args.paths, config)]
    hierarchy = load_hierarchy(args.paths, files, config, warnings)
    twins = []
    configured = config.families
    if args.discover:
        twins, root = discover(files, config, hierarchy, warnings)
        # The stand-ins' families are shown beside the twins.
        config, _ = with_spec_classes(
            replace(config, discover_families=False), files, hierarchy, warnings
        )
    else:
        config, hierarchy = with_spec_classes(config, files, hierarchy, warnings)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.output_format in ("mermaid", "dot"):
        from vllm_spec_lint.faces import hierarchy_graph

        draw = getattr(hierarchy_graph, args.output_format)
        classes = spec_hierarchy(config, hierarchy)
        sys.stdout.write(draw(hierarchy, classes, config.families, twins))
        return EXIT_CLEAN
    if args.discover:
        stand_ins = [f for f in config.families if f.derived_from]
        if args.output_format == "json":
            print(json.dumps([t.to_json() for t in twins], indent=2))
        else:
            print(_twins_table(twins, root, hierarchy, config.families))
            if stand_ins:
                print()
                print(_stand_ins_text(stand_ins))
        return EXIT_CLEAN
    if args.output_format == "json":
        families = [
            {
                "name": f.name,
                "module": f.module,
                "anchor": f.anchor,
                "companions": list(f.companions),
                "discovered": bool(f.evidence),
                "stand_in": f.stand_in or None,
                "quiet": f.quiet_reason or None,
            }
            for f in config.families
        ]
        bases = {
            cls: list(hierarchy.bases[cls]) for cls in spec_hierarchy(config, hierarchy)
        }
        report = {
            "families": families,
            "hierarchy": bases,
            "source": hierarchy.described_sources(),
        }
        print(json.dumps(report, indent=2))
        return EXIT_CLEAN
    for family in config.families:
        if family.derived_from:
            continue
        kind = "discovered" if family not in configured else "family"
        print(f"{kind} {family.name} ({family.module})")
        print(f"  anchor: {short_name(family.anchor)}")
        for companion in family.companions:
            print(f"  companion: {short_name(companion)}")
        if family.evidence:
            print(f"  evidence: {family.evidence}")
    stand_ins = [f for f in config.families if f.derived_from]
    if stand_ins:
        print(_stand_ins_text(stand_ins))
    print(f"hierarchy (from {hierarchy.described_sources()}):")
    for cls in spec_hierarchy(config, hierarchy):
        bases = ", ".join(short_name(b) for b in hierarchy.bases[cls]) or "-"
        print(f"  {short_name(cls)} <- {bases}")
    return EXIT_CLEAN


def _stand_ins_text(families) -> str:
    """The stand-ins' families, and the configuration that checks them when
    files are checked a few at a time (pre-commit, flake8, an editor): those
    see only the classes in the files they are given."""
    import json

    from vllm_spec_lint.model.hierarchy import short_name

    lines = []
    for family in families:
        kind = "subclass" if family.quiet_reason else "stand-in"
        lines.append(f"{kind} {family.name} ({family.module})")
        lines.append(f"  anchor: {short_name(family.anchor)}")
        for companion in family.companions:
            module = companion.rpartition(".")[0]
            where = "" if module == family.module else f" ({module})"
            lines.append(f"  companion: {short_name(companion)}{where}")
        lines.append(f"  from: {family.stand_in}")
        if family.quiet_reason:
            lines.append("  reported with --strict only")
    if all(f.quiet_reason for f in families):
        return "\n".join(lines)
    lines.append(
        "To check the stand-ins when files are checked a few at a time "
        "(pre-commit, flake8, an editor), add to [tool.vllm-spec-lint]:"
    )
    lines.append("extend-families = [")
    for family in families:
        members = [
            m if i and m.rpartition(".")[0] != family.module else short_name(m)
            for i, m in enumerate((family.anchor, *family.companions))
        ]
        entry = (
            f'{{ name = "{family.name}", module = '
            f'"{family.module}", members = {json.dumps(members)} }},'
        )
        lines.append(f"  # {entry}" if family.quiet_reason else f"  {entry}")
    lines.append("]")
    return "\n".join(lines)


def _twins_table(twins, root, hierarchy, families) -> str:
    """Discovered twins as a table, each with its configuration entry."""
    from vllm_spec_lint.model.hierarchy import short_name
    from vllm_spec_lint.model.twins import THRESHOLD

    lines = [
        f"structural twins among the subclasses of {root or '(no root class)'} "
        f"(hierarchy from {hierarchy.described_sources()}; "
        f"proposed at a score of {THRESHOLD:g} or more):"
    ]
    if not twins:
        return "\n".join(lines + ["  none"])
    paired = {(f.anchor, c) for f in families for c in f.companions}
    lines.append("| anchor | companion | score | configured | evidence |")
    lines.append("|---|---|---|---|---|")
    for twin in twins:
        evidence = "; ".join(twin.evidence)
        configured = "yes" if (twin.anchor, twin.companion) in paired else "no"
        lines.append(
            f"| {short_name(twin.anchor)} | {short_name(twin.companion)} "
            f"| {twin.score:g} | {configured} | {evidence} |"
        )
    lines.append("")
    lines.append("To check them as families, add to [tool.vllm-spec-lint]:")
    lines.append("extend-families = [")
    for twin in twins:
        module, _, anchor = twin.anchor.rpartition(".")
        companion_module, _, companion = twin.companion.rpartition(".")
        if module != companion_module:
            lines.append(f"  # {twin.anchor} / {twin.companion}: not one module")
            continue
        if (twin.anchor, twin.companion) in paired:
            lines.append(f"  # {anchor} / {companion}: configured already")
            continue
        name = f"{anchor}-{companion}".lower()
        lines.append(
            f'  {{ name = "{name}", module = "{module}", '
            f'members = ["{anchor}", "{companion}"] }},'
        )
    lines.append("]")
    return "\n".join(lines)
