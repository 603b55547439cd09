"""fspace.crashtest_check and crashtest_lint on traces the `fspace` command
records (ci/python.sh puts it on PATH), on each filesystem of the matrix:
the replace-by-rename bug of the CLI's tests (crashtest_programs/bugs.py) is
found with its story and its fix passes, and the Python report is the CLI's
`--json` document field for field. Also: the refusals."""

import _thread
import errno
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import fspace

PROGRAMS = Path(__file__).resolve().parents[2] / "fspace-cli" / "tests" / "crashtest_programs"
# Differ from run to run: wall times.
TIMES = ("seconds", "ms_per_state")


def fspace_cmd():
    cmd = shutil.which("fspace")
    if cmd is None:
        pytest.fail("the fspace command is not on PATH: these tests record traces with it "
                    "(ci/python.sh builds it and puts it there)", pytrace=False)
    return cmd


def python():
    # The system's interpreter, as the CLI's tests record it: a venv's
    # python is a link to it, but a version manager's shim would be
    # recorded too.
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def record(d, pattern, fixed):
    """Records `bugs.py pattern [fixed]` in d (holding db/ with data="old")."""
    trace = os.path.join(d, f"{pattern}-{'fixed' if fixed else 'bug'}.trace")
    args = [fspace_cmd(), "crashtest", "record", "--root", "db", "--trace", trace, "--",
            python(), str(PROGRAMS / "bugs.py"), pattern] + (["fixed"] if fixed else [])
    r = subprocess.run(args, cwd=d, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stdout + r.stderr
    return trace


def checker(pattern):
    return ["sh", str(PROGRAMS / "check.sh"), pattern]


def cli_json(command, trace):
    """The CLI's `--json` document of `check` (with the replace checker) or
    `lint` for the trace."""
    args = [fspace_cmd(), "crashtest", command, "--json", trace]
    if command == "check":
        args[4:4] = ["-q"]
        args += ["--"] + checker("replace")
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return json.loads(r.stdout)


def without_times(doc):
    return {k: v for k, v in doc.items() if k not in TIMES}


def test_crashtest_finds_the_replace_bug_and_passes_its_fix(fs):
    for fixed in (False, True):
        run = fs.path(f"run-{fixed}")
        os.makedirs(os.path.join(run, "db"))
        Path(run, "db", "data").write_text("old")
        trace = record(run, "replace", fixed)

        r = fspace.crashtest_check(trace, checker("replace"), jobs=2)
        assert isinstance(r, fspace.CrashCheckReport)
        assert r.trace == trace and r.program[-2:] == (["replace", "fixed"] if fixed else
                                                       [str(PROGRAMS / "bugs.py"), "replace"])
        assert r.models == ["posix", "ext4", "xfs", "btrfs"]
        assert r.states >= r.distinct >= 2 and r.points >= 2 and r.ops > 0, r
        assert r.seconds > 0 and r.ms_per_state > 0
        lint = fspace.crashtest_lint(trace)
        assert isinstance(lint, fspace.LintReport) and lint.trace == trace

        # The CLI's documents on the same trace: the same, but for wall times.
        assert without_times(r.to_dict()) == without_times(cli_json("check", trace))
        assert lint.to_dict() == cli_json("lint", trace)
        assert json.loads(r.to_json()) == r.to_dict()

        if fixed:
            assert r.passed and r.failures == [] and r.failed_states == 0, r
            assert r.to_dict()["verdict"] == "not-found"
            assert lint.findings == [], lint
            continue
        assert not r.passed and r.to_dict()["verdict"] == "found"
        assert r.failed_states >= r.failed_distinct >= 1
        assert r.failed_states == r.inconsistent_states + r.lost_states
        # ext4's auto_da_alloc writes the data before the rename commits.
        failing = sorted({m for f in r.failures for m in f.models})
        assert failing == ["btrfs", "posix", "xfs"], r.failures
        f = r.failures[0]
        assert isinstance(f, fspace.CrashFailure)
        assert f.kind == "inconsistent" and f.model in f.models
        assert f.point in ("before-sync", "during-sync-write", "after-ack", "between", "end")
        assert 0 <= f.after <= r.ops
        assert f.exit_status == 1 and f.signal is None and not f.timed_out
        assert "data holds ''" in f.output
        assert f.lost and f.state_dir is None and f.same_states >= 1
        story = "\n".join(f.story)
        for words in ("NOT persisted:", "write(data.tmp, 0..3)", "rename(data.tmp -> data)",
                      "data holds ''"):
            assert words in story, story
        assert r.to_dict()["stories"][0] == f.story
        assert [x.rule for x in lint.findings] == ["rename-unsynced-data"]
        finding = lint.findings[0]
        assert isinstance(finding, fspace.LintFinding)
        assert finding.ops and "rename" in finding.text and "auto_da_alloc" in finding.source

        # Options: one model; kept states; a loss status of None.
        kept = fs.path("kept")
        k = fspace.crashtest_check(trace, checker("replace"), models=["xfs", "xfs"], keep=True,
                                   work_dir=kept, max_failures=1, loss_status=None, jobs=1)
        assert k.models == ["xfs"] and len(k.failures) == 1
        assert k.failures[0].models == ["xfs"] and k.work_dir is not None
        assert k.failures[0].state_dir is not None and os.path.isdir(k.failures[0].state_dir)
        assert k.failures[0].state_dir.startswith(kept)
        none = fspace.crashtest_check(trace, checker("replace"), models=["ext4"])
        assert none.passed, none.failures


def test_crashtest_refusals(tmp_path):
    run = tmp_path / "run"
    (run / "db").mkdir(parents=True)
    (run / "db" / "data").write_text("old")
    trace = record(str(run), "replace", False)
    with pytest.raises(TypeError, match="not a str"):
        fspace.crashtest_check(trace, "sh check.sh")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="checker is empty"):
        fspace.crashtest_check(trace, [])
    with pytest.raises(ValueError, match=r'unknown crash model "zfs" \(posix, ext4, xfs, btrfs\)'):
        fspace.crashtest_check(trace, checker("replace"), models=["zfs"])
    with pytest.raises(ValueError, match="models is empty"):
        fspace.crashtest_check(trace, checker("replace"), models=[])
    for bad in (dict(states_per_point=0), dict(jobs=-1), dict(max_failures=0),
                dict(between=-1)):
        with pytest.raises(ValueError, match="must be at least"):
            fspace.crashtest_check(trace, checker("replace"), **bad)
    for t in (0.0, -1.0, float("nan"), 1e9):
        with pytest.raises(ValueError, match="timeout"):
            fspace.crashtest_check(trace, checker("replace"), timeout=t)
    missing = str(tmp_path / "missing.trace")
    for call in (lambda: fspace.crashtest_check(missing, checker("replace")),
                 lambda: fspace.crashtest_lint(missing)):
        with pytest.raises(FileNotFoundError) as e:
            call()
        assert e.value.errno == errno.ENOENT and missing in str(e.value.filename)
    # A checker that rejects the state the program left when nothing
    # crashed: the check cannot tell anything, and says so; the work
    # directory keeps what it held.
    work = tmp_path / "work"
    work.mkdir()
    (work / "mine.txt").write_text("the caller's")
    with pytest.raises(OSError) as e:
        fspace.crashtest_check(trace, ["sh", "-c", "echo no; exit 1"], work_dir=work)
    assert os.listdir(work) == ["mine.txt"]
    assert e.value.errno == errno.EINVAL and e.value.filename == trace
    assert "rejects the state the program left when nothing crashed" in str(e.value)
    assert "saying: no" in str(e.value)
    # Nothing was changed: the trace still checks.
    assert not fspace.crashtest_check(trace, checker("replace"), models=["posix"]).passed


def test_crashtest_ctrl_c_stops_the_check(tmp_path):
    """SIGINT while checkers run (here: each sleeps 30 s) raises
    KeyboardInterrupt within seconds, kills them and leaves no state."""
    run = tmp_path / "run"
    (run / "db").mkdir(parents=True)
    (run / "db" / "data").write_text("old")
    trace = record(str(run), "replace", False)
    work = tmp_path / "work"
    # Accepts the state left when nothing crashed (data = new) at once, and
    # sleeps in every crash state.
    slow = ["sh", "-c", 'grep -q new data 2>/dev/null && [ "$(cat data)" = new ] && '
            '[ -s "$FSPACE_CRASH_ACKS" ] && exit 0; sleep 30']
    timer = threading.Timer(2.0, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            fspace.crashtest_check(trace, slow, work_dir=work, jobs=2)
    finally:
        timer.cancel()
    took = time.monotonic() - started
    assert took < 15, f"the check went on {took:.1f} s after Ctrl-C"
    assert os.listdir(work) == [], os.listdir(work)
