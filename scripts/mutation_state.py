"""Keep mutmut's verdicts in the repository, so that a run goes on where the
last one stopped, on another machine or in another session.

    python scripts/mutation_state.py restore   # before `mutmut run` (nox does it)
    python scripts/mutation_state.py save      # after it, or after stopping it
    python scripts/mutation_state.py restore --rejudge vllm_spec_lint.edges.runner

mutmut keeps its verdicts in ``mutants/**/*.py.meta``, a folder no one
commits; a whole run takes longer than a session, and twice a machine's
``/tmp`` or home went with a day of verdicts. ``save`` copies each module's
verdicts (mutmut's exit codes) and the hash mutmut gave each mutated
function into ``mutation/verdicts/<module>.json``, with the commit they
judge; ``restore`` writes them back as mutmut's meta files, and mutmut
itself keeps a verdict only while its function's hash is unchanged.

``move FROM TO FUNCTION...`` carries the saved verdicts of functions moved
unchanged from module FROM to module TO (``vllm_spec_lint.model.x``; each
function as mutmut names it, ``x__value`` or ``xǁClassǁmethod``), with their
hashes: mutmut keeps them only if each function's code is the same there.
A function renamed on the way is new code to mutmut, and is judged again.

``save`` merges: a verdict mutmut has now replaces the saved one; a mutant
mutmut has not checked keeps its saved verdict while its function is
unchanged. So machines that each ran some modules can save into one tree.

A verdict holds while its function is unchanged, also when the tests
change: a survivor judged before a test that kills it stays a survivor.
``restore --rejudge PREFIX`` restores the survivors whose names start with
``PREFIX`` as not checked (less those MUTATION.md lists as equivalent), so
that the next run judges them with today's tests; if it stops before, ``save``
keeps their old verdicts.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from mutation_report import EQUIVALENT  # the script beside this one

REPO = Path(__file__).resolve().parent.parent
MUTANTS = REPO / "mutants"
VERDICTS = REPO / "mutation" / "verdicts"


def function_of(mutant: str) -> str:
    # vllm_spec_lint.core.noqa.x_is_suppressed__mutmut_3 -> x_is_suppressed
    return mutant.partition("__mutmut_")[0].rpartition(".")[2]


def restore(
    mutants: Path = MUTANTS,
    verdicts: Path = VERDICTS,
    rejudge: tuple[str, ...] = (),
    equivalent: frozenset[str] = frozenset(),
) -> int:
    count = 0
    for saved_path in sorted(verdicts.rglob("*.json")):
        saved = json.loads(saved_path.read_text(encoding="utf-8"))
        if rejudge:
            saved["verdicts"] = {
                name: None
                if code == 0 and name.startswith(rejudge) and name not in equivalent
                else code
                for name, code in saved["verdicts"].items()
            }
        meta = mutants / saved_path.relative_to(verdicts).with_suffix(".py.meta")
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(
            json.dumps(
                {
                    "exit_code_by_key": saved["verdicts"],
                    "hash_by_function_name": saved["functions"],
                    "type_check_error_by_key": {},
                    "durations_by_key": {},
                    "estimated_durations_by_key": {},
                },
                indent=1,
            ),
            encoding="utf-8",
        )
        count += 1
    return count


def save(commit: str, mutants: Path = MUTANTS, verdicts: Path = VERDICTS) -> int:
    count = 0
    for meta_path in sorted(mutants.rglob("*.py.meta")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        target = verdicts / meta_path.relative_to(mutants)
        target = target.with_name(target.name.removesuffix(".py.meta") + ".json")
        functions = meta["hash_by_function_name"]
        found = dict(meta["exit_code_by_key"])
        if target.exists():
            earlier = json.loads(target.read_text(encoding="utf-8"))
            for name, code in found.items():
                function = function_of(name)
                # A saved verdict holds while its function is the same code.
                same = earlier["functions"].get(function) == functions.get(function)
                if code is None and same:
                    found[name] = earlier["verdicts"].get(name)
        _write(target, {"commit": commit, "functions": functions, "verdicts": found})
        count += 1
    return count


def move(
    source: str, target: str, functions: list[str], verdicts: Path = VERDICTS
) -> int:
    """Carry the saved verdicts of ``functions`` from module ``source`` to
    module ``target``; how many mutants' verdicts moved."""
    from_path, to_path = (_verdicts_file(verdicts, m) for m in (source, target))
    moving = json.loads(from_path.read_text(encoding="utf-8"))
    if to_path.exists():
        landing = json.loads(to_path.read_text(encoding="utf-8"))
    else:  # the commit says which code the verdicts judge: the moved code's
        landing = {"commit": moving["commit"], "functions": {}, "verdicts": {}}
    missing = [f for f in functions if f not in moving["functions"]]
    if missing:
        raise KeyError(f"no saved verdicts of {', '.join(missing)} in {source}")
    count = 0
    for function in functions:
        landing["functions"][function] = moving["functions"].pop(function)
        prefix = f"{source}.{function}__mutmut_"
        for name in [n for n in moving["verdicts"] if n.startswith(prefix)]:
            number = name.removeprefix(prefix)
            code = moving["verdicts"].pop(name)
            landing["verdicts"][f"{target}.{function}__mutmut_{number}"] = code
            count += 1
    # The landing first: a stop between the two leaves the verdicts twice,
    # never nowhere.
    _write(to_path, landing)
    _write(from_path, moving)
    return count


def _verdicts_file(verdicts: Path, module: str) -> Path:
    return verdicts.joinpath(*module.split(".")).with_suffix(".json")


def _write(target: Path, saved: dict) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(saved, indent=1, sort_keys=True)
    # Written whole, then renamed: a stopped save leaves the old file.
    partial = target.with_suffix(".json.partial")
    partial.write_text(text + "\n", encoding="utf-8")
    partial.replace(target)


def _git(where: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=where, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mutation_state.py",
        description="Copy mutmut's verdicts between mutants/ and mutation/verdicts/.",
    )
    parser.add_argument("action", choices=["restore", "save", "move"])
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="move: the module moved from, the module moved to, the functions",
    )
    parser.add_argument("--mutants", type=Path, default=MUTANTS, metavar="DIR")
    parser.add_argument("--verdicts", type=Path, default=VERDICTS, metavar="DIR")
    parser.add_argument(
        "--rejudge",
        action="append",
        default=[],
        metavar="PREFIX",
        help="restore: survivors whose names start with PREFIX as not checked",
    )
    parser.add_argument(
        "--listing",
        type=Path,
        default=REPO / "MUTATION.md",
        metavar="FILE",
        help="the file listing equivalent mutants, left as they are",
    )
    # Names may come after the options too: ``move --verdicts DIR FROM TO F``.
    args = parser.parse_intermixed_args(argv)
    moving = args.action == "move"
    if (moving and len(args.names) < 3) or (not moving and args.names):
        parser.error("move takes FROM TO FUNCTION...; restore and save take no names")
    try:
        if moving:
            source, target, *functions = args.names
            count = move(source, target, functions, args.verdicts)
            print(f"moved the verdicts of {count} mutants")
            return 0
        if args.action == "restore":
            equivalent = frozenset()
            if args.rejudge:
                listing = args.listing.read_text(encoding="utf-8")
                equivalent = frozenset(EQUIVALENT.findall(listing))
            count = restore(
                args.mutants, args.verdicts, tuple(args.rejudge), equivalent
            )
        else:
            commit = _git(args.mutants.parent, "rev-parse", "--short", "HEAD")
            if _git(args.mutants.parent, "status", "--porcelain", "vllm_spec_lint"):
                # The verdicts name the commit they judge: it has to be one.
                print(
                    "error: vllm_spec_lint/ has uncommitted changes; "
                    "commit them before saving verdicts",
                    file=sys.stderr,
                )
                return 2
            count = save(commit, args.mutants, args.verdicts)
    except (OSError, ValueError, KeyError, subprocess.CalledProcessError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{args.action}d the verdicts of {count} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
