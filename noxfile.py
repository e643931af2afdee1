"""Sessions for every Python vLLM supports.

    nox -s tests            # the whole suite, on the default Python (3.11)
    nox -s fast             # the CLI, rule and fix tests on 3.10 ... 3.13
    nox -s package          # sdist + wheel, twine check, the wheel in a fresh venv
    nox -s mutation         # mutation testing of the analysis core (MUTATION.md)

Interpreters are taken from pyenv's folders when they are there (this
project's machines keep them under ~/.pyenv/versions), else from PATH.
"""

from __future__ import annotations

import glob
import os
import pathlib
import shutil
import tempfile

import nox

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
REPO = pathlib.Path(__file__).parent

nox.options.sessions = ["tests", "fast"]
# Only interpreters already on the machine: nothing is downloaded.
nox.options.download_python = "never"


def _pyenv_paths() -> list[str]:
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = []
    for version in PYTHONS:
        found += sorted(
            glob.glob(os.path.join(root, "versions", f"{version}.*", "bin"))
        )
    return found


os.environ["PATH"] = os.pathsep.join([*_pyenv_paths(), os.environ.get("PATH", "")])


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    session.install(".[test]")
    session.run(
        "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *session.posargs
    )


@nox.session(python=PYTHONS)
def fast(session: nox.Session) -> None:
    session.install(".[test]")
    session.run(
        "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "fast",
        *session.posargs,
    )  # fmt: skip


@nox.session(python="3.11")
def package(session: nox.Session) -> None:
    """Build, check the metadata, and run the README's first command with the
    wheel (not the source tree) installed in a fresh virtual environment."""
    session.install("build", "twine")
    dist = pathlib.Path(tempfile.mkdtemp(prefix="vsl-dist-"))
    session.run("python", "-m", "build", "--outdir", str(dist), str(REPO))
    wheels = sorted(dist.glob("*.whl"))
    sdists = sorted(dist.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        session.error(f"expected one wheel and one sdist in {dist}")
    session.run("twine", "check", "--strict", *map(str, wheels + sdists))
    venv = dist / "venv"
    session.run("python", "-m", "venv", str(venv))
    python = str(venv / "bin" / "python")
    session.run(python, "-m", "pip", "install", "-q", str(wheels[0]), external=True)
    # Away from the source tree, so that only the installed wheel can answer.
    shutil.copytree(REPO / "examples", dist / "examples")
    session.chdir(dist)
    # The README's first command: exit 1, the example tree's five findings.
    out = session.run(
        str(venv / "bin" / "vllm-spec-lint"), "check", "--no-cache", "examples",
        external=True, success_codes=[1], silent=True,
    )  # fmt: skip
    if "Found 5 errors." not in out:
        session.error(f"the README's first command did not report 5 findings:\n{out}")
    # A plain install lays out its fixes (ruff is a dependency): no fixed
    # line over the limit, and no warning that fixes were left unformatted.
    fixed = session.run(
        str(venv / "bin" / "vllm-spec-lint"), "fix", "--unsafe-fixes", "--no-cache",
        "examples", external=True, success_codes=[0], silent=True,
    )  # fmt: skip
    if "warning" in (fixed or ""):
        session.error(f"fix warned on a plain install:\n{fixed}")
    long = [
        f"{path}:{row}"
        for path in sorted((dist / "examples").rglob("*.py"))
        for row, line in enumerate(path.read_text().splitlines(), 1)
        if len(line) > 88
    ]
    if long:
        session.error(f"a plain install's fix left lines over 88: {long}")
    # The installed package, not this folder's: run from elsewhere.
    where = session.run(
        python, "-c", "import vllm_spec_lint; print(vllm_spec_lint.__file__)",
        external=True, silent=True,
    )  # fmt: skip
    if str(REPO) in where:
        session.error(f"the package was imported from the source tree: {where}")


@nox.session(python="3.11")
def mutation(session: nox.Session) -> None:
    """Mutation testing (mutmut; settings in setup.cfg) and the per-module
    table for MUTATION.md. Not run by CI: the whole package takes hours."""
    # scripts/mutmut_run.py patches one function of mutmut 3.8's stats phase.
    session.install(".[test]", "mutmut==3.8.1")
    mutants = REPO / "mutants"
    shutil.rmtree(mutants, ignore_errors=True)
    # A git root of its own, so that this checkout's .gitignore (which lists
    # mutants/) does not exclude the copied example tree from the tests' runs.
    mutants.mkdir()
    session.run("git", "init", "-q", str(mutants), external=True)
    # Verdicts kept in the repository: mutmut re-judges only what changed.
    session.run("python", "scripts/mutation_state.py", "restore")
    try:
        session.run("python", "scripts/mutmut_run.py", "run", *session.posargs)
    finally:
        session.run("python", "scripts/mutation_state.py", "save")
    session.run("python", "scripts/mutation_report.py")
