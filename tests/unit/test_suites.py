"""The README's two test commands split the tests into two suites and every test is in exactly
one: the fast suite (the default `pytest -q`: everything outside tests/e2e/, any user) and the
e2e suite (`pytest -q -m e2e`, as root: tests/e2e/). A test outside tests/e2e/ needs no root, so
a user who is not root runs the whole fast suite and skips nothing for want of root."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

from tests.conftest import ROOT

README = ROOT / "README.md"
E2E = ROOT / "tests" / "e2e"


def readme_pytest_commands() -> dict[str, list[str]]:
    """{"fast": args, "e2e": args}: the README's `python -m pytest` lines; `sudo` marks e2e."""
    found: dict[str, list[str]] = {}
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), re.S):
        for line in block.splitlines():
            if " -m pytest" not in line:
                continue
            words = shlex.split(line)
            sudo = words[0] == "sudo"
            words = words[1:] if sudo else words
            assert words[:3] == [".venv/bin/python", "-m", "pytest"], line
            found["e2e" if sudo else "fast"] = words[3:]
    return found


def collected(args: list[str]) -> set[str]:
    """The test ids `pytest -q ARGS --collect-only` selects, from the checkout."""
    args = ["-q", *(a for a in args if a != "-q"), "--collect-only", "-p", "no:cacheprovider"]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return {line for line in proc.stdout.splitlines() if "::" in line}


def test_the_readme_shows_the_fast_and_the_e2e_command() -> None:
    commands = readme_pytest_commands()
    assert commands.keys() == {"fast", "e2e"}, commands
    assert "-m" not in commands["fast"], "the fast suite is pytest's default selection"
    assert commands["e2e"][commands["e2e"].index("-m") + 1] == "e2e"


def test_every_test_is_in_exactly_one_suite() -> None:
    commands = readme_pytest_commands()
    fast, e2e = collected(commands["fast"]), collected(commands["e2e"])
    everything = collected(["-m", ""])  # no selection at all
    assert fast and e2e
    assert fast & e2e == set()
    assert fast | e2e == everything, sorted(everything - fast - e2e)[:20]
    assert e2e == {t for t in everything if t.startswith("tests/e2e/")}


def test_no_fast_test_asks_for_root() -> None:
    """A root check outside tests/e2e/ would skip (or fail) a fast test for a user who is not
    root: such a test goes to tests/e2e/, or fakes root where only a check asks for it."""
    asks = re.compile(r"geteuid\(\)|need_sandbox\(|getuid\(\) *[!=]= *0")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if not path.is_relative_to(E2E)
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if asks.search(line)
    ]
    assert found == []


def test_the_consoles_take_their_width_when_they_print(monkeypatch) -> None:
    """Under pytest-xdist a worker starts with COLUMNS=80; a console made then kept 80 columns
    whatever a test set, and wrapped the lines tests look for (tests/conftest.py)."""
    from clusterctl.cli.common import err, out

    for columns in ("200", "123"):
        monkeypatch.setenv("COLUMNS", columns)
        assert (out.width, err.width) == (int(columns), int(columns))


def test_ci_runs_both_readme_commands() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    for args in readme_pytest_commands().values():
        assert " ".join([".venv/bin/python -m pytest", *args]) in ci, args


def _ci_suite(*commands: str) -> subprocess.CompletedProcess[str]:
    """.ci/run's `suite` function, run on stand-in commands; prints the suites it failed."""
    ci = (ROOT / ".ci" / "run").read_text()
    function = re.search(r"^suite\(\) \{\n.*?^\}\n", ci, re.S | re.M)
    assert function, ".ci/run has no suite() function"
    script = (
        "failed=()\n" + function.group(0) + "\n".join(commands) + '\necho "failed=${failed[*]}"'
    )
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)


def test_ci_fails_a_required_suite_that_selects_no_tests_and_says_so_for_an_optional_one() -> None:
    """pytest's exit 5 (no tests selected) is neither a silent pass nor a wrong failure."""
    got = _ci_suite(
        "suite empty required sh -c 'exit 5'",
        "suite not-yet optional sh -c 'exit 5'",
        "suite red required sh -c 'exit 1'",
        "suite green required true",
    )
    assert got.stdout.splitlines()[-1] == "failed=empty red", got.stdout + got.stderr
    assert "ci: suite empty selected no tests, and it must hold some" in got.stderr
    assert "ci: suite not-yet selected no tests: nothing to run" in got.stdout


def test_every_e2e_module_has_its_place_in_the_workers_order() -> None:
    """The e2e suite's wall time rests on its modules' order (the soak first at full priority,
    then longest first): a new module is placed there, not appended by accident."""
    from tests.conftest import E2E_FIRST, E2E_ORDER

    modules = {p.stem for p in E2E.rglob("test_*.py")}
    assert modules - set(E2E_ORDER) == set(), "add them to tests/conftest.py E2E_ORDER"
    assert set(E2E_ORDER) - modules == set(), "gone from tests/e2e/: drop them from E2E_ORDER"
    assert len(E2E_ORDER) == len(set(E2E_ORDER))
    assert set(E2E_FIRST) <= set(E2E_ORDER)
    assert E2E_ORDER[: len(E2E_FIRST)] == E2E_FIRST  # started before the others take the CPU


def test_ci_runs_the_fast_suite_as_a_user_who_is_not_root() -> None:
    """A newcomer runs the README's test command as themselves: CI, which runs as root, runs the
    fast suite as another user, so a test that needs root fails in CI as it would for them."""
    ci = (ROOT / ".ci" / "run").read_text()
    fast = next(line for line in ci.splitlines() if line.startswith("suite fast "))
    assert fast.startswith('suite fast required "${as_user[@]}" .venv/bin/python -m pytest')
    assert "as_user=(runuser -u gpucl-ci --)" in ci
    setup, _, after = ci.partition(fast)
    assert "chown -R gpucl-ci: ." in setup and "chown -R root: ." in after
