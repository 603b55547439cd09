#!/usr/bin/env python3
"""fspace's engine advice proven on the engines themselves: defaults against the advice, alternating in one run.

Per filesystem (default ext4 xfs btrfs) this runs `fspace probe --for ENGINES
--json --write-config DIR` on the mount (standard level; LEVEL=quick for
--quick), keeps its JSON and the written fragments in the run folder, then per
engine alternates REPEAT rounds (the order rotated each round) of:
  defaults   the engine with none of the advised settings
  advice     the written fragment as it is (every setting except the
             trade-offs, which it has commented out)
  opt-in:... each trade-off applied with what it `requires` (shown apart)
  grid:...   with GRID=1, every combination of the values `Engine::advisable`
             names: PostgreSQL wal_sync_method x wal_init_zero x wal_recycle,
             MariaDB innodb_flush_method x innodb_log_file_buffering, RocksDB
             allow_fallocate x (recycle_log_file_num=4 with
             wal_recovery_mode=kSkipAnyCorruptedRecords, or neither)
with durable commits, each run SECONDS long:
  PostgreSQL 15  pgbench -M prepared (TPC-B-like, scale SCALE, default 8),
                 1 and 8 clients; synchronous_commit=on; the cluster is
                 started for its turn and stopped after it, with a CHECKPOINT
                 and a `sync` before each pgbench run
  MariaDB 10.11  sysbench oltp_insert, 1 and 8 threads;
                 innodb_flush_log_at_trx_commit=1; mariadbd started for its
                 turn (--defaults-file, the advice by `!include`), `sync`
                 before each run
  RocksDB 7.8    db_bench fillrandom and fillseq, --sync=1, value 1000 B, a
                 --num calibrated once per filesystem to take about SECONDS;
                 every option in the --options_file (db_bench ignores option
                 flags beside one); the defaults' file is the advice's without
                 its setting lines. Both sides get write_buffer_size=1 MiB
                 (WRITE_BUFFER) so that a run of seconds switches WAL files
                 and recycling can act at all (at db_bench's 64 MiB it never
                 would).
Before a configuration is measured its settings are read back from the
running engine (SHOW, SELECT @@..., the OPTIONS-* file RocksDB writes); a
value that did not take effect drops that configuration with a message (a
`not-measured` setting the engine overrides by itself, as InnoDB's log
buffering on btrfs, is reported, not dropped). Printed per engine x fs x
workload: median (min-max) per configuration, the median (min-max) of the
per-round ratios to the defaults (and, for trade-offs and the grid, to the
advice), the grid's best, and the probe's expected commits/s beside the
1-client rate. Servers are stopped and data directories removed always,
also on Ctrl-C or an error. Run folder: bench/runs/DATE-engines[-TAG]/
(raw.json, probe-FS.json, config-FS/, output.txt, README.md).

Needs root (PostgreSQL runs as `postgres`), Debian 12's postgresql-15,
mariadb-server, sysbench and rocksdb-tools (`ci/matrix.sh deps`), the matrix
(`ci/matrix.sh up`; FSPACE_MATRIX_SIZE_MB=2048 leaves room for the grid's
clusters) and a release build.
Usage: [REPEAT=5] [SECONDS=10] [LEVEL=quick] [GRID=1] [ENGINES=postgresql,mariadb,rocksdb]
       [SCALE=8] [WRITE_BUFFER=1048576] [TAG=name] bench/engines.py [fs ...]
       bench/engines.py --table RUN/raw.json [RUN/raw-2.json ...]   (a Markdown table of recorded runs)
"""
import itertools, json, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time
from benchlib import mounts, save_raw, start_run, FSPACE, ROOT

REPEAT = int(os.environ.get("REPEAT", "5"))
SECONDS = int(os.environ.get("SECONDS", "10"))
LEVEL = os.environ.get("LEVEL", "standard")
GRID = os.environ.get("GRID", "0") == "1"
ENGINES = [e for e in os.environ.get("ENGINES", "postgresql,mariadb,rocksdb").split(",") if e]
SCALE = int(os.environ.get("SCALE", "8"))
WRITE_BUFFER = int(os.environ.get("WRITE_BUFFER", str(1 << 20)))
PG_BIN = "/usr/lib/postgresql/15/bin"

# The grid: the values Engine::advisable lists (crates/fspace/src/probe/engines/mod.rs).
GRIDS = {
    "postgresql": [("wal_sync_method", ["fdatasync", "open_datasync"]),
                   ("wal_init_zero", ["on", "off"]),
                   ("wal_recycle", ["on", "off"])],
    "mariadb": [("innodb_flush_method", ["O_DIRECT", "O_DSYNC"]),
                ("innodb_log_file_buffering", ["OFF", "ON"])],
    "rocksdb": [("allow_fallocate", ["true", "false"]),
                ("recycle_log_file_num", [("0", None), ("4", "kSkipAnyCorruptedRecords")])],
}
WORKLOADS = {"postgresql": ["pgbench 1c", "pgbench 8c"],
             "mariadb": ["oltp_insert 1t", "oltp_insert 8t"],
             "rocksdb": ["fillrandom", "fillseq"]}


class Dropped(Exception):
    """A configuration whose settings did not take effect."""


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r.stdout


def rate_in(output, pattern, tool):
    """The rate `pattern`'s group matches in a tool's output; an error with the output if none."""
    m = re.search(pattern, output)
    if not m:
        raise RuntimeError(f"{tool} printed no rate matching {pattern!r}:\n{output}")
    return float(m.group(1))


def as_postgres(*cmd):
    return sh(["runuser", "-u", "postgres", "--", *cmd])


def norm(v):
    v = str(v).strip()
    return {"on": "1", "off": "0", "true": "1", "false": "0"}.get(v.lower(), v)


def check(label, expected, soft, got):
    """Compares read-back values; raises Dropped on a hard mismatch, returns warnings."""
    warn = []
    for name, want in expected.items():
        have = got.get(name)
        if have is not None and norm(have) == norm(want):
            continue
        msg = f"{label}: {name} reads back {have!r}, not {want!r}"
        if name in soft:
            warn.append(msg + " (a not-measured setting the engine overrides; the advice says so)")
        else:
            raise Dropped(msg + ": the setting did not take effect, configuration dropped")
    return warn


class Config:
    """One configuration of one engine: its label, group (defaults, advice,
    opt-in, grid), the lines to add, and what must read back."""

    def __init__(self, label, group, lines, expected, soft=()):
        self.label, self.group, self.lines, self.expected, self.soft = label, group, lines, expected, set(soft)
        self.server = None
        self.warnings = []


# ---------------------------------------------------------------- PostgreSQL

class Postgres:
    def __init__(self, base, cfg):
        self.dir = tempfile.mkdtemp(prefix="pg-", dir=base)
        os.chmod(self.dir, 0o755)
        shutil.chown(self.dir, "postgres", "postgres")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "pg.log")
        self.running = False
        try:
            self.setup(cfg)
        except BaseException:
            self.close()
            raise

    def setup(self, cfg):
        as_postgres(f"{PG_BIN}/initdb", "-D", self.data, "-U", "postgres", "--no-instructions")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n# bench/engines.py: the same for every configuration\n"
                    "listen_addresses = ''\n"
                    f"unix_socket_directories = '{self.dir}'\n"
                    "fsync = on\nsynchronous_commit = on\nmax_connections = 40\n"
                    f"# bench/engines.py: {cfg.label}\n" + "".join(l + "\n" for l in cfg.lines))
        self.start()
        as_postgres(f"{PG_BIN}/pgbench", "-i", "-q", "-s", str(SCALE), "-h", self.dir, "-U", "postgres", "postgres")
        got = {n: self.sql(f"SHOW {n}") for n in cfg.expected}
        cfg.readback = got
        cfg.warnings += check(cfg.label, cfg.expected, cfg.soft, got)
        self.stop()

    def sql(self, q):
        return as_postgres(f"{PG_BIN}/psql", "-h", self.dir, "-U", "postgres", "-XAtq", "-c", q, "postgres").strip()

    def start(self):
        as_postgres(f"{PG_BIN}/pg_ctl", "-D", self.data, "-l", self.log, "-w", "start")
        self.running = True

    def stop(self):
        if self.running:
            subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", self.data,
                            "-m", "fast", "-w", "stop"], capture_output=True)
            self.running = False

    def measure(self):
        self.start()
        try:
            out = []
            for clients in (1, 8):
                self.sql("CHECKPOINT")
                subprocess.run(["sync", "-f", self.dir])
                o = as_postgres(f"{PG_BIN}/pgbench", "-n", "-M", "prepared", "-c", str(clients),
                                "-j", str(min(clients, 2)), "-T", str(SECONDS), "-h", self.dir,
                                "-U", "postgres", "postgres")
                out.append(rate_in(o, r"tps = ([0-9.]+) \(without initial connection time\)", "pgbench"))
            return out
        finally:
            self.stop()

    def close(self):
        self.stop()
        pid = os.path.join(self.data, "postmaster.pid")
        if os.path.exists(pid):  # pg_ctl stop failed: the postmaster by its own pid file
            try:
                os.kill(int(open(pid).readline()), signal.SIGQUIT)
                time.sleep(1)
            except (OSError, ValueError):
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- MariaDB

class Mariadb:
    def __init__(self, base, cfg):
        self.dir = tempfile.mkdtemp(prefix="maria-", dir=base)
        self.data = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "mysql.sock")
        self.log = os.path.join(self.dir, "error.log")
        self.cnf = os.path.join(self.dir, "my.cnf")
        tmp = os.path.join(self.dir, "tmp")
        os.mkdir(tmp)
        self.proc = None
        try:
            self.setup(cfg, tmp)
        except BaseException:
            self.close()
            raise

    def setup(self, cfg, tmp):
        with open(self.cnf, "w") as f:
            f.write("[mysqld]\n# bench/engines.py: the same for every configuration\n"
                    f"datadir={self.data}\nsocket={self.sock}\nlog-error={self.log}\ntmpdir={tmp}\n"
                    "skip-networking\nuser=root\ninnodb_flush_log_at_trx_commit=1\n"
                    f"# bench/engines.py: {cfg.label}\n" + "".join(l + "\n" for l in cfg.lines))
        sh(["mariadb-install-db", f"--defaults-file={self.cnf}", "--auth-root-authentication-method=normal",
            "--skip-test-db"])
        self.start()
        self.sql("CREATE DATABASE sbtest")
        sh(self.sysbench(1) + ["prepare"])
        got = {n: self.sql(f"SELECT @@{n}") for n in cfg.expected}
        cfg.readback = got
        cfg.warnings += check(cfg.label, cfg.expected, cfg.soft, got)
        self.stop()

    def sysbench(self, threads):
        return ["sysbench", "oltp_insert", f"--mysql-socket={self.sock}", "--mysql-user=root",
                "--mysql-db=sbtest", "--tables=4", "--table-size=10000", f"--threads={threads}",
                f"--time={SECONDS}", "--report-interval=0"]

    def sql(self, q):
        return sh(["mariadb", "-S", self.sock, "-uroot", "--connect-timeout=10", "-N", "-B", "-e", q]).strip()

    def start(self):
        self.proc = subprocess.Popen(["mariadbd", f"--defaults-file={self.cnf}"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        until = time.time() + 120
        while True:
            if self.proc.poll() is not None:
                self.proc = None
                raise RuntimeError(f"mariadbd exited instead of starting; {self.log}:\n" + tail(self.log))
            if os.path.exists(self.sock):
                try:
                    self.sql("SELECT 1")
                    return
                except RuntimeError:
                    pass
            if time.time() > until:
                raise RuntimeError("mariadbd did not answer in 120 s:\n" + tail(self.log))
            time.sleep(0.2)

    def stop(self):
        if self.proc is None:
            return
        subprocess.run(["mariadb-admin", "-S", self.sock, "-uroot", "--connect-timeout=10", "shutdown"],
                       capture_output=True)
        try:
            self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def measure(self):
        self.start()
        try:
            out = []
            for threads in (1, 8):
                subprocess.run(["sync", "-f", self.dir])
                o = sh(self.sysbench(threads) + ["run"])
                out.append(rate_in(o, r"transactions:\s+\d+\s+\(([0-9.]+) per sec", "sysbench"))
            return out
        finally:
            self.stop()

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def tail(path, n=15):
    try:
        return "".join(open(path, errors="replace").readlines()[-n:])
    except OSError:
        return "(no log)"


# ---------------------------------------------------------------- RocksDB

def options_section(text, section):
    out, inside = {}, False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1] == section
        elif inside and "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def with_write_buffer(text):
    return text.replace('[CFOptions "default"]\n',
                        f'[CFOptions "default"]\n  write_buffer_size={WRITE_BUFFER}\n', 1)


class Rocksdb:
    num = None  # per filesystem, calibrated

    def __init__(self, base, cfg):
        self.dir = tempfile.mkdtemp(prefix="rocks-", dir=base)
        self.db = os.path.join(self.dir, "db")
        self.options = os.path.join(self.dir, "options.ini")
        with open(self.options, "w") as f:
            f.write(cfg.file_text)
        self.cfg = cfg
        try:
            # Read back: a tiny run, then the OPTIONS-* file it wrote.
            self.run("fillrandom", 50)
            got = self.effective()
            cfg.readback = {n: got.get(n) for n in cfg.expected}
            cfg.warnings += check(cfg.label, cfg.expected, cfg.soft, got)
        except BaseException:
            self.close()
            raise

    def effective(self):
        files = sorted((int(f.split("-")[1]), f) for f in os.listdir(self.db) if re.fullmatch(r"OPTIONS-\d+", f))
        if not files:
            raise RuntimeError(f"no OPTIONS-* file in {self.db}")
        return options_section(open(os.path.join(self.db, files[-1][1])).read(), "DBOptions")

    def run(self, bench, num):
        subprocess.run(["sync", "-f", self.dir])
        o = sh(["db_bench", f"--db={self.db}", f"--options_file={self.options}", f"--benchmarks={bench}",
                "--sync=1", f"--num={num}", "--value_size=1000", "--threads=1", "--use_existing_db=0",
                "--statistics=0", "--histogram=0"])
        return rate_in(o, rf"{bench}\s*:\s*[0-9.]+ micros/op\s+([0-9]+) ops/sec", "db_bench")

    def measure(self):
        out = []
        for bench in ("fillrandom", "fillseq"):
            out.append(self.run(bench, Rocksdb.num))
            # Every run makes its database anew: its own OPTIONS file must still say what was asked.
            got = self.effective()
            bad = [n for n, v in self.cfg.expected.items() if n not in self.cfg.soft and norm(got.get(n)) != norm(v)]
            if bad:
                raise Dropped(f"{self.cfg.label}: {bad} not as asked in the OPTIONS file of a {bench} run")
        return out

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- configurations

def configs_for(engine, advice, written):
    """defaults, advice, opt-in trade-offs and (GRID=1) the grid, from the probe's advice."""
    settings = advice["settings"]
    applied = [s for s in settings if s["kind"] != "trade-off"]
    tradeoffs = [s for s in settings if s["kind"] == "trade-off"]
    soft = [s["name"] for s in settings if s["kind"] == "not-measured"]
    defaults_expected = {s["name"]: s["default"] for s in settings}
    advice_expected = {s["name"]: s["value"] for s in applied}
    # A trade-off is not applied: its setting keeps the default, unless an applied setting names it.
    advice_expected.update({s["name"]: s["default"] for s in tradeoffs if s["name"] not in advice_expected})
    out = []

    def cfg(label, group, lines, expected, text=None):
        c = Config(label, group, lines, expected, soft)
        if engine == "rocksdb":
            c.file_text = with_write_buffer(text)
        out.append(c)

    if engine == "rocksdb":
        names = {s["name"] for s in settings} | {r.split("=")[0] for s in tradeoffs for r in s["requires"]}
        bare = "".join(l for l in written.splitlines(True)
                       if l.strip().lstrip("#").split("=")[0].strip() not in names or "=" not in l)
        cfg("defaults", "defaults", [], defaults_expected, bare)
        cfg("advice", "advice", [], advice_expected, written)
        for s in tradeoffs:
            lines = [f"{s['name']}={s['value']}", *s["requires"]]
            text = written
            for l in lines:
                text = text.replace(f"#{l}\n", f"{l}\n")
            exp = dict(advice_expected, **dict(l.split("=", 1) for l in lines))
            cfg("opt-in: " + ", ".join(lines), "opt-in", [], exp, text)
        if GRID:
            (fa, fvals), (rn, rvals) = GRIDS["rocksdb"]
            for a, (r, mode) in itertools.product(fvals, rvals):
                kv = {fa: a, rn: r}
                if mode:
                    kv["wal_recovery_mode"] = mode
                body = "".join(f"  {k}={v}\n" for k, v in kv.items())
                text = bare.replace("[DBOptions]\n", "[DBOptions]\n" + body, 1)
                # A point that needs the trade-off's recovery mode is not advice: shown apart.
                cfg("grid: " + ", ".join(f"{k}={v}" for k, v in kv.items()),
                    "grid opt-in" if mode else "grid", [], kv, text)
        return out

    include = ("include '{}'" if engine == "postgresql" else "!include {}").format(written)
    cfg("defaults", "defaults", [], defaults_expected)
    cfg("advice", "advice", [include], advice_expected)
    for s in tradeoffs:
        lines = [*s["requires"], f"{s['name']}={s['value']}"]
        exp = dict(advice_expected, **dict(l.split("=", 1) for l in lines))
        cfg("opt-in: " + ", ".join(lines), "opt-in", [include, *lines], exp)
    if GRID:
        names = [n for n, _ in GRIDS[engine]]
        for vals in itertools.product(*[v for _, v in GRIDS[engine]]):
            kv = dict(zip(names, vals))
            cfg("grid: " + ", ".join(f"{k}={v}" for k, v in kv.items()), "grid",
                [f"{k}={v}" for k, v in kv.items()], kv)
    return out


# ---------------------------------------------------------------- report

def med(xs):
    return f"{statistics.median(xs):8.0f} ({min(xs):.0f}-{max(xs):.0f})"


def ratio(xs):
    return f"{statistics.median(xs):.2f}x ({min(xs):.2f}-{max(xs):.2f})"


def report(engine, fs, configs, rounds, advice):
    exp = advice.get("expected") or {}
    print(f"\n## {engine} on {fs}: {len(rounds)} rounds of {SECONDS} s; "
          f"probe expected {exp.get('commits_per_sec', 0):.0f} commits/s "
          f"({exp.get('low', 0):.0f}-{exp.get('high', 0):.0f}) [{exp.get('setup', '?')}]")
    summary = []
    width = max(len(c.label) for c in configs)
    for w, wl in enumerate(WORKLOADS[engine]):
        print(f"  {wl}:")
        per = {c.label: [r[c.label][w] for r in rounds if c.label in r] for c in configs}

        def rat(a, b):
            return [r[a][w] / r[b][w] for r in rounds if a in r and b in r]

        best = None
        for c in configs:
            xs = per.get(c.label)
            if not xs:
                continue
            row = {"engine": engine, "fs": fs, "workload": wl, "config": c.label, "group": c.group,
                   "median": statistics.median(xs), "min": min(xs), "max": max(xs), "rounds": len(xs)}
            line = f"    {c.label:{width}} {med(xs)}"
            for other, key in (("defaults", "defaults"), ("advice", "advice")):
                if c.label == other or (other == "advice" and c.group not in ("opt-in", "grid", "grid opt-in")):
                    continue
                r = rat(c.label, other)
                if r:
                    line += f"   ÷ {other} {ratio(r)}"
                    row.update({f"ratio_{key}": statistics.median(r), f"ratio_{key}_min": min(r),
                                f"ratio_{key}_max": max(r)})
            print(line)
            summary.append(row)
            if c.group == "grid" and (best is None or statistics.median(xs) > statistics.median(per[best.label])):
                best = c
        if best is not None and rat(best.label, "advice"):
            print(f"    grid best (no trade-off): {best.label}, ÷ advice {ratio(rat(best.label, 'advice'))}")
        adv = per.get("advice")
        if w == 0 and adv:
            print(f"    probe expected {exp.get('commits_per_sec', 0):.0f} commits/s; the engine with the advice "
                  f"reached {statistics.median(adv):.0f} ({statistics.median(adv) / exp['commits_per_sec']:.2f}x)"
                  if exp.get("commits_per_sec") else "    probe gave no expected rate")
    return summary


# ---------------------------------------------------------------- main

KINDS = {"postgresql": Postgres, "mariadb": Mariadb, "rocksdb": Rocksdb}
CONFIG_FILES = {"postgresql": "postgresql.conf.fspace", "mariadb": "my.cnf.fspace",
                "rocksdb": "rocksdb.options.fspace"}


def calibrate(base, cfg):
    """A --num that takes about SECONDS with the defaults (fillrandom)."""
    Rocksdb.num = 300
    r = Rocksdb(base, cfg)
    try:
        rate = r.run("fillrandom", 1000)
    finally:
        r.close()
    return max(200, int(rate * SECONDS))


def run_engine(engine, fs, base, advice, written, raw):
    configs = configs_for(engine, advice, written)
    servers = {}
    try:
        if engine == "rocksdb":
            Rocksdb.num = calibrate(base, configs[0])
            print(f"# {engine} on {fs}: --num={Rocksdb.num} (calibrated to about {SECONDS} s of fillrandom)")
        for c in configs:
            try:
                servers[c.label] = KINDS[engine](base, c)
            except Dropped as e:
                print(f"# DROPPED {e}", flush=True)
                if c.group in ("defaults", "advice"):
                    raise
            for w in c.warnings:
                print(f"# note: {w}")
        live = [c for c in configs if c.label in servers]
        print(f"# {engine} on {fs}: read back " + "; ".join(
            f"{c.label}: " + ", ".join(f"{k}={v}" for k, v in c.readback.items()) for c in live), flush=True)
        rounds = []
        for rnd in range(REPEAT):
            k = rnd % len(live)
            order = live[k:] + live[:k]
            res = {}
            for c in order:
                if c.label not in servers:
                    continue
                try:
                    res[c.label] = servers[c.label].measure()
                except Dropped as e:
                    print(f"# DROPPED {e}", flush=True)
                    servers.pop(c.label).close()
            rounds.append(res)
            print(f"{engine} {fs} round {rnd + 1}: " + "  ".join(
                f"{c.label.split(':')[0] if c.group in ('defaults', 'advice') else c.label}="
                + "/".join(f"{x:.0f}" for x in res[c.label]) for c in order if c.label in res), flush=True)
        summary = report(engine, fs, live, rounds, advice)
        raw["results"].append({"engine": engine, "fs": fs, "workloads": WORKLOADS[engine],
                               "num": Rocksdb.num if engine == "rocksdb" else None,
                               "configs": [{"label": c.label, "group": c.group, "lines": c.lines,
                                            "expected": c.expected, "readback": c.readback,
                                            "warnings": c.warnings} for c in live],
                               "rounds": rounds, "summary": summary, "expected": advice.get("expected")})
    finally:
        for s in servers.values():
            s.close()


def versions():
    v = {}
    for name, cmd in [("postgresql", [f"{PG_BIN}/postgres", "--version"]), ("mariadb", ["mariadbd", "--version"]),
                      ("rocksdb", ["db_bench", "--version"]), ("sysbench", ["sysbench", "--version"]),
                      ("fspace", [FSPACE, "--version"])]:
        try:
            v[name] = sh(cmd).strip()
        except (RuntimeError, OSError) as e:
            v[name] = f"unknown ({e})"
    return v


def interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def table(paths):
    """A Markdown table from recorded runs' raw*.json: per engine x fs x workload the defaults,
    the advice against them, the best trade-off (opt-in, or a grid point that needs one) and the
    best grid point that needs none against the advice."""
    def cell(row, key):
        if row is None or f"ratio_{key}" not in row:
            return "-"
        return f"{row[f'ratio_{key}']:.2f}x ({row[f'ratio_{key}_min']:.2f}-{row[f'ratio_{key}_max']:.2f})"

    def rate(row):
        return f"{row['median']:,.0f} ({row['min']:,.0f}-{row['max']:,.0f})"

    print("| engine | fs | workload | defaults | advice ÷ defaults | best opt-in ÷ defaults "
          "| grid best | grid best ÷ advice |")
    print("|---|---|---|---|---|---|---|---|")
    for path in paths:
        for res in json.load(open(path))["results"]:
            for wl in res["workloads"]:
                rows = [r for r in res["summary"] if r["workload"] == wl]
                by = {r["config"]: r for r in rows}
                adv = by.get("advice")
                opt = max((r for r in rows if r["group"] in ("opt-in", "grid opt-in")),
                          key=lambda r: r.get("ratio_defaults", 0), default=None)
                grid = max((r for r in rows if r["group"] == "grid"), key=lambda r: r["median"], default=None)
                gname = grid["config"].removeprefix("grid: ") if grid else "-"
                verdict = ""
                if grid and "ratio_advice" in grid:
                    verdict = (" **beats the advice in every round**" if grid["ratio_advice_min"] > 1.0
                               else "")
                print(f"| {res['engine']} | {res['fs']} | {wl} | {rate(by['defaults'])} | "
                      f"{cell(adv, 'defaults')} | {cell(opt, 'defaults')} | {gname} | "
                      f"{cell(grid, 'advice')}{verdict} |")


def main():
    if sys.argv[1:2] == ["--table"]:
        return table(sys.argv[2:])
    if os.geteuid() != 0:
        sys.exit("bench/engines.py: needs root")
    for e in ENGINES:
        if e not in KINDS:
            sys.exit(f"bench/engines.py: unknown engine {e!r}")
    # Ctrl-C and SIGTERM unwind through every `finally` (servers stopped, directories removed).
    # (SIGINT set explicitly: a shell's background job starts with it ignored.)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, interrupted)
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs"]
    m = mounts()
    run_dir = start_run("engines")
    raw = {"date": time.strftime("%Y-%m-%d %H:%M"), "uname": os.uname().release, "seconds": SECONDS,
           "repeat": REPEAT, "level": LEVEL, "grid": GRID, "scale": SCALE, "write_buffer": WRITE_BUFFER,
           "versions": versions(), "results": []}
    print(f"# bench/engines.py  {raw['date']}  Linux {raw['uname']}  REPEAT={REPEAT} SECONDS={SECONDS} "
          f"LEVEL={LEVEL} GRID={int(GRID)} SCALE={SCALE} WRITE_BUFFER={WRITE_BUFFER}")
    for k, v in raw["versions"].items():
        print(f"# {k}: {v}")
    print("# rates: pgbench tps, sysbench transactions/s, db_bench ops/s; each a durable commit; "
          "ratios are the median (min-max) of per-round ratios")
    try:
        for fs in fss:
            if fs not in m:
                print(f"# {fs} not mounted, skipped")
                continue
            base = tempfile.mkdtemp(prefix="bench-engines-", dir=m[fs])
            os.chmod(base, 0o755)
            try:
                conf = os.path.join(run_dir, f"config-{fs}")
                os.makedirs(conf, exist_ok=True)
                probe_dir = tempfile.mkdtemp(prefix="probe-", dir=base)
                t = time.time()
                out = sh([FSPACE, "probe", "-q", "--json", *(["--quick"] if LEVEL == "quick" else []),
                          "--for", ",".join(ENGINES), "--write-config", conf, probe_dir])
                shutil.rmtree(probe_dir, ignore_errors=True)
                doc = json.loads(out)
                with open(os.path.join(run_dir, f"probe-{fs}.json"), "w") as f:
                    f.write(out)
                print(f"# probe on {fs}: {time.time() - t:.0f} s; advice written to {os.path.relpath(conf, ROOT)}/")
                for adv in doc["engines"]:
                    print(f"#   {adv['engine']}: " + ", ".join(
                        f"{s['name']}={s['value']} [{s['kind']}]" for s in adv["settings"]))
                for engine in ENGINES:
                    adv = next(a for a in doc["engines"] if a["engine"] == engine)
                    written = os.path.join(conf, CONFIG_FILES[engine])
                    if engine == "rocksdb":
                        written = open(written).read()
                    elif engine == "postgresql":  # a copy the postgres user can read
                        shutil.copy(written, os.path.join(base, CONFIG_FILES[engine]))
                        written = os.path.join(base, CONFIG_FILES[engine])
                        os.chmod(written, 0o644)
                    try:
                        run_engine(engine, fs, base, adv, written, raw)
                    except Dropped as e:
                        print(f"# {engine} on {fs} not measured: {e}", flush=True)
            finally:
                shutil.rmtree(base, ignore_errors=True)
    finally:
        save_raw(run_dir, "raw", raw)


if __name__ == "__main__":
    main()
