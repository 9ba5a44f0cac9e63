"""The `export` section of bench.py: `epf export` (Parquet) against `epf import` of the same table, in rows/s.

For `application_price` (split by storefront into one file each) and `application_detail` (long multi-script
text), the same table file is imported into a fresh database and that table exported into a fresh directory,
alternately; each figure is the fastest run. Target (issue 32): the export's rows/s at least the import's.
Info rows: the export's peak RSS (it must not grow with the table: compare the quick and full profiles), the
Parquet bytes against the database's, and, when the test venv has DuckDB (scripts/prerequisites --test),
`SELECT storefront_id, count(*), avg(retail_price) ... GROUP BY 1 ORDER BY 2 DESC LIMIT 3` in DuckDB over the
Parquet files against `epf sql` over the database.

Inputs: one generated feed of those tables (cached under benchmarks/out/inputs, keyed by the epf binary's tag,
apps, storefronts and seed); databases and Parquet directories live under benchmarks/out/work and are deleted.
"""

import os
import shutil
import sqlite3
import subprocess
import time

TARGET = 1.00
APPS = {"full": 500_000, "quick": 50_000}
STOREFRONTS = 20
AGGREGATE = ("SELECT storefront_id, count(*), avg(retail_price) FROM {} GROUP BY storefront_id "
             "ORDER BY 2 DESC LIMIT 3")


def bench_export(b, epf, profile_name, reps):
    apps = APPS[profile_name]
    if not epf.has("export"):
        b.unavailable("epf export vs epf import, rows/s", epf.missing("export"), f"≥ {TARGET:.2f}×")
        return
    feed = feed_input(b, epf, apps)
    work = b.fresh_dir(os.path.join(b.WORK, "export"))
    try:
        for table in ("application_price", "application_detail"):
            measure_table(b, epf, feed, table, work, max(2, reps))
        aggregate(b, epf, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure_table(b, epf, feed, table, work, reps):
    source = feed[table]
    database = os.path.join(work, f"{table}.sqlite")
    out = os.path.join(work, f"parquet-{table}")
    b.warm(source)

    def importing():
        b.remove_db(database)
        b.log(f"export: importing {table}")
        return b.measure([epf.path, "import", source, "--db", database, "--quiet"])

    def exporting(compression):
        shutil.rmtree(out, ignore_errors=True)
        b.log(f"export: exporting {table} ({compression})")
        return b.measure([epf.path, "export", out, "--db", database, "--tables", table, "--compression",
                          compression], discard_stdout=True)

    imports, exports, plain = [], [], []
    for _ in range(reps):
        imports.append(importing())
        plain.append(exporting("none"))
        exports.append(exporting("gzip"))
    imported, exported, uncompressed = b.best_of(imports), b.best_of(exports), b.best_of(plain)
    figure = f"epf export of {table} vs epf import of it, rows/s"
    target = f"≥ {TARGET:.2f}×"
    if imported.returncode != 0 or exported.returncode != 0:
        failed = imported if imported.returncode != 0 else exported
        b.add(b.Row(figure, "", "", "", target, "error", failed.failure()))
        return
    rows = count(database, table)
    ratio = imported.seconds / exported.seconds
    b.add(b.Row(f"{figure} ({rows:,} rows)", b.fmt_rate(rows / exported.seconds, "rows/s"),
                b.fmt_rate(rows / imported.seconds, "rows/s") + " (import)", b.fmt_ratio(ratio), target,
                b.verdict(ratio >= TARGET),
                f"fastest of {reps} alternating runs: export {', '.join(f'{r.seconds:.2f}' for r in exports)} s, "
                f"import {', '.join(f'{r.seconds:.2f}' for r in imports)} s"))
    if uncompressed.returncode == 0:
        b.add(b.Row(f"{figure}, --compression none", b.fmt_rate(rows / uncompressed.seconds, "rows/s"),
                    b.fmt_rate(rows / imported.seconds, "rows/s") + " (import)",
                    b.fmt_ratio(imported.seconds / uncompressed.seconds), "", "info",
                    f"export {', '.join(f'{r.seconds:.2f}' for r in plain)} s"))
    parquet_bytes = sum(os.path.getsize(os.path.join(root, name))
                        for root, _, names in os.walk(out) for name in names)
    b.add(b.Row(f"export: peak RSS and size of {table} ({rows:,} rows)", b.fmt_mb(exported.maxrss_kb), "", "", "",
                "info", f"Parquet {parquet_bytes / 1e6:,.1f} MB, SQLite database "
                f"{os.path.getsize(database) / 1e6:,.1f} MB"))


def aggregate(b, epf, work):
    """DuckDB over the Parquet files of application_price against epf sql over its database (info)."""
    python = os.path.join(b.ROOT, ".build", "test-venv", "bin", "python")
    database = os.path.join(work, "application_price.sqlite")
    out = os.path.join(work, "parquet-application_price")
    figure = "export: the issue's GROUP BY over application_price, DuckDB on the Parquet files vs epf sql"
    if not os.path.exists(python) or subprocess.run([python, "-c", "import duckdb"]).returncode != 0:
        b.unavailable(figure, "no DuckDB in .build/test-venv (scripts/prerequisites --test)")
        return
    sql = b.measure([epf.path, "sql", AGGREGATE.format("application_price"), "--csv", "--db", database])
    glob = os.path.join(out, "application_price", "*", "*.parquet")
    b.run([epf.path, "export", out, "--db", database, "--tables", "application_price"])
    query = AGGREGATE.format("read_parquet('" + glob + "')")
    script = ("import duckdb, time; c = duckdb.connect(); started = time.monotonic(); "
              f"rows = c.execute({query!r}).fetchall(); "
              "print(time.monotonic() - started); print(rows)")
    started = time.monotonic()
    duck = subprocess.run([python, "-c", script], capture_output=True, text=True)
    total = time.monotonic() - started
    if sql.returncode != 0 or duck.returncode != 0:
        b.add(b.Row(figure, "", "", "", "", "error", (sql.stderr or duck.stderr)[-300:]))
        return
    query_seconds = float(duck.stdout.splitlines()[0])
    b.add(b.Row(figure, f"{query_seconds:.3f} s (query; {total:.2f} s with Python's start)", b.fmt_s(sql.seconds),
                b.fmt_ratio(query_seconds / sql.seconds), "", "info",
                "same three storefronts and counts" if same_answer(sql.stdout, duck.stdout) else "ANSWERS DIFFER"))


def same_answer(csv, duck):
    lines = csv.strip().splitlines()[1:]
    theirs = eval(duck.splitlines()[1])  # a list of tuples DuckDB printed
    return [tuple(line.split(",")[:2]) for line in lines] == [(str(a), str(c)) for a, c, _ in theirs]


def count(database, table):
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        connection.close()


def feed_input(b, epf, apps):
    """The generated application_price and application_detail files, cached."""
    key = f"{epf.tag}epf-export-a{apps}-p{STOREFRONTS}-s{b.SEED}"

    def make(directory):
        b.run([epf.path, "generate", directory, "--apps", str(apps), "--seed", str(b.SEED), "--only",
               "application_price,application_detail", "--price-storefronts", str(STOREFRONTS)])
        return {table: b.find_table_file(directory, table) for table in ("application_price", "application_detail")}

    return b.cached(key, make)
