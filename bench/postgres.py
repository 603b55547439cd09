#!/usr/bin/env python3
"""fspace's log against PostgreSQL's WAL on the same mount, alternating in one run.

Per filesystem (default ext4 xfs btrfs) this makes its own PostgreSQL cluster
(Debian's `postgresql` package: initdb as the `postgres` user, the data
directory on the mount under test, a unix socket in it and no TCP,
`wal_init_zero=on`, `wal_recycle=on`, `synchronous_commit=on`), then runs
REPEAT rounds of, alternating:
  pgbench, 1 client    one transactional 8 KiB pg_logical_emit_message per commit
                       (prepared statements; a CHECKPOINT and a sync before each pgbench,
                       a sync before each fspace run)
  fspace, 1 writer     `fspace bench commit --mode wal`, 8 KiB records
  pgbench, 8 clients
  fspace, 8 writers
  fspace, 16 writers
each for SECONDS, and prints per round the ratios fspace ÷ PostgreSQL (1 writer ÷ 1
client, 8 ÷ 8, 16 ÷ 8 clients), then the median and the min-max of the rounds.
The cluster is stopped with `pg_ctl stop` by its data directory and removed, also
after an error. Run folder: bench/runs/DATE-postgres[-TAG]/
(raw.json, output.txt, README.md with the command and commit).

Needs root (to run PostgreSQL as `postgres`), the matrix (`ci/matrix.sh up`;
2048 MB or more leaves room for the WAL) and a release build.
Usage: [REPEAT=3] [SECONDS=8] [TAG=name] bench/postgres.py [fs ...]
"""
import glob, json, os, re, shutil, statistics, subprocess, sys, tempfile, time
from benchlib import mounts, save_raw, start_run, FSPACE, ROOT

REPEAT = int(os.environ.get("REPEAT", "3"))
SECONDS = int(os.environ.get("SECONDS", "8"))
PG_BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1] if glob.glob("/usr/lib/postgresql/*/bin") else None
SCRIPT = "SELECT pg_logical_emit_message(true, 'fspace', repeat('x', 8192));\n"


def as_postgres(*cmd, **kw):
    return subprocess.run(["runuser", "-u", "postgres", "--", *cmd], check=True,
                          capture_output=True, text=True, **kw)


class Cluster:
    """A throwaway cluster in `base`/pgdata; `stop()` always runs."""

    def __init__(self, base):
        self.base = base
        self.data = os.path.join(base, "pgdata")
        self.sock = base
        shutil.chown(base, "postgres", "postgres")
        as_postgres(f"{PG_BIN}/initdb", "-D", self.data, "-U", "postgres", "--no-instructions")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n# bench/postgres.py\n"
                    "listen_addresses = ''\n"
                    f"unix_socket_directories = '{self.sock}'\n"
                    "fsync = on\nsynchronous_commit = on\n"
                    "wal_init_zero = on\nwal_recycle = on\n"
                    "max_wal_size = 1GB\nshared_buffers = 128MB\n"
                    "max_connections = 40\n")
        self.log = os.path.join(base, "pg.log")
        as_postgres(f"{PG_BIN}/pg_ctl", "-D", self.data, "-l", self.log, "-w", "start")
        self.script = os.path.join(base, "emit.sql")
        with open(self.script, "w") as f:
            f.write(SCRIPT)
        shutil.chown(self.script, "postgres", "postgres")

    def pgbench(self, clients):
        # As its experts run it: a checkpoint and a sync first (so that no
        # earlier side's dirty pages are flushed during this one), prepared
        # statements.
        as_postgres(f"{PG_BIN}/psql", "-h", self.sock, "-U", "postgres", "-q", "-c", "CHECKPOINT",
                    "postgres")
        subprocess.run(["sync", "-f", self.data])
        out = as_postgres(f"{PG_BIN}/pgbench", "-n", "-M", "prepared", "-f", self.script,
                          "-c", str(clients),
                          "-j", str(min(clients, 4)), "-T", str(SECONDS), "-h", self.sock,
                          "-U", "postgres", "postgres").stdout
        m = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out)
        if not m:
            raise RuntimeError(f"pgbench printed no tps:\n{out}")
        return float(m.group(1))

    def stop(self):
        subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/pg_ctl", "-D", self.data,
                        "-m", "fast", "-w", "stop"], capture_output=True)


def fspace_wal(d, writers):
    subprocess.run(["sync", "-f", d])
    out = subprocess.run([FSPACE, "bench", "commit", "--json", "--mode", "wal", "--record", "8KiB",
                          "--writers", str(writers), "--seconds", str(SECONDS), d],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)["results"][0]
    return r["commits_per_sec"], r["wal"]["io"]["sync_method"]


def summary(xs):
    return f"{statistics.median(xs):.2f}x ({min(xs):.2f}-{max(xs):.2f})"


def main():
    if os.geteuid() != 0 or PG_BIN is None:
        sys.exit("bench/postgres.py: needs root and Debian's postgresql package")
    fss = sys.argv[1:] or ["ext4", "xfs", "btrfs"]
    m = mounts()
    run_dir = start_run("postgres")
    raw = {"date": time.strftime("%Y-%m-%d %H:%M"), "uname": os.uname().release,
           "seconds": SECONDS, "repeat": REPEAT, "postgres": PG_BIN, "runs": []}
    print(f"# bench/postgres.py  {raw['date']}  Linux {raw['uname']}  REPEAT={REPEAT} SECONDS={SECONDS}  {PG_BIN}")
    print("# commits/s; ratio = fspace ÷ PostgreSQL of the same round")
    for fs in fss:
        base = tempfile.mkdtemp(prefix="bench-pg-", dir=m[fs])
        os.chmod(base, 0o755)
        cluster = None
        try:
            cluster = Cluster(base)
            fsdir = tempfile.mkdtemp(prefix="bench-fspace-", dir=m[fs])
            r1, r8, r16 = [], [], []
            for rnd in range(REPEAT):
                pg1 = cluster.pgbench(1)
                f1, method = fspace_wal(fsdir, 1)
                pg8 = cluster.pgbench(8)
                f8, _ = fspace_wal(fsdir, 8)
                f16, _ = fspace_wal(fsdir, 16)
                r1.append(f1 / pg1); r8.append(f8 / pg8); r16.append(f16 / pg8)
                raw["runs"].append({"fs": fs, "round": rnd, "pg1": pg1, "pg8": pg8, "fspace1": f1,
                                    "fspace8": f8, "fspace16": f16, "fspace_sync_method": method})
                print(f"{fs:6} round {rnd + 1}: pg 1c {pg1:7.0f}  fspace 1w {f1:7.0f} ({f1 / pg1:.2f}x)  "
                      f"pg 8c {pg8:7.0f}  fspace 8w {f8:7.0f} ({f8 / pg8:.2f}x)  16w {f16:7.0f} ({f16 / pg8:.2f}x)",
                      flush=True)
            print(f"{fs:6} fspace 1w ÷ pg 1c {summary(r1)}   8w ÷ 8c {summary(r8)}   16w ÷ 8c {summary(r16)}"
                  f"   [log: {method}]", flush=True)
            shutil.rmtree(fsdir, ignore_errors=True)
        finally:
            if cluster:
                cluster.stop()
            shutil.rmtree(base, ignore_errors=True)
    save_raw(run_dir, "raw", raw)


if __name__ == "__main__":
    main()
