"""SQLite through Python's sqlite3, as its documentation says to use it:
`sqlite_kv.py SYNCHRONOUS N` commits N transactions into db/kv.db (made
by `sqlite_kv.py create` before the recording, in WAL mode) and prints
"committed I" after each COMMIT returned: the acknowledgement. A
checkpoint in the middle moves the log into the database."""
import os
import sqlite3
import sys

if sys.argv[1] == "create":
    db = sqlite3.connect("db/kv.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT NOT NULL)")
    db.close()
    sys.exit(0)

sync, n = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect("db/kv.db", isolation_level=None)
db.execute(f"PRAGMA synchronous={sync}")
for i in range(1, n + 1):
    db.execute("BEGIN")
    db.execute("INSERT INTO kv(k, v) VALUES (?, ?)", (i, f"value {i} " * 30))
    db.execute("COMMIT")
    os.write(1, b"committed %d\n" % i)
    if i == n // 2:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
db.close()
