"""The checker of sqlite_kv.py, run in a crash state: exit 0 when the
database opens, passes PRAGMA integrity_check, holds rows 1..k with their
values and k covers every acknowledged commit; exit 3 (a durability loss:
consistent, but acknowledged commits missing); exit 1 for anything else
(corruption)."""
import os
import re
import sqlite3
import sys

acks = open(os.environ["FSPACE_CRASH_ACKS"], "rb").read()
acked = max([int(x) for x in re.findall(rb"committed (\d+)", acks)] or [0])
try:
    db = sqlite3.connect("kv.db")
    check = db.execute("PRAGMA integrity_check").fetchall()
    if check != [("ok",)]:
        print("integrity_check:", check)
        sys.exit(1)
    rows = db.execute("SELECT k, v FROM kv ORDER BY k").fetchall()
except sqlite3.DatabaseError as e:
    print("the database does not open:", e)
    sys.exit(1)
for want, (k, v) in enumerate(rows, 1):
    if k != want or v != f"value {k} " * 30:
        print(f"row {want}: found key {k} with {v[:20]!r}...")
        sys.exit(1)
if len(rows) < acked:
    print(f"{acked} commits acknowledged, {len(rows)} in the database")
    sys.exit(3)
