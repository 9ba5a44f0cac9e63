"""The postgres section of the epf benchmarks (issue 14): `epf import --db postgresql://...` against psql.

For the 20-million-row application_price and the 1-million-row application_detail (quick: 2M and 100k):

- the baseline is the fastest thing a user could do by hand: the same rows pre-converted to PostgreSQL's text
  COPY format (the conversion is not timed; cached under benchmarks/out/inputs), loaded with psql's `\\copy` into a
  new table, then the same primary key and secondary indexes epf builds, and ANALYZE, in one psql session;
- epf imports the EPF file (parse, verify, binary COPY into a staging table with checkpoints, key, indexes,
  ANALYZE, swap, ledger) into a fresh schema.

Both run against one throwaway cluster started here (initdb into a temporary directory, as nobody when root,
unix socket only, stopped at the end), alternating, best of --reps. Targets: at most 1.3x psql's time, at least
10x the Python fork's rows/s (54,000 price rows/s, 9,500 application rows/s), peak RSS under 200 MB.

Called from bench.py with the bench module itself (`b`) for its helpers and its table of rows.
"""

import glob
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

TIME_TARGET = 1.3
SPEED_TARGET = 10
RSS_TARGET_MB = 200
# Primary keys and secondary indexes as epf builds them (Sources/EPFStore/Schema.swift).
KEYS = {"application_price": ["application_id", "storefront_id"],
        "application_detail": ["application_id", "language_code"]}
INDEXES = {"application_price": [["application_id"]], "application_detail": []}


def binaries():
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(versions[-1]) if versions else None


class Cluster:
    """A throwaway cluster: initdb, pg_ctl start, and stop + remove on close."""

    def __init__(self, b, bin_dir):
        self.bin_dir = bin_dir
        self.directory = tempfile.mkdtemp(prefix="epf-bench-pg-")
        self.as_nobody = os.getuid() == 0
        if self.as_nobody:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.directory, nobody.pw_uid, nobody.pw_gid)
        self.port = b.free_port()
        self.run("initdb", "-D", f"{self.directory}/data", "-A", "trust", "-U", "postgres", "-E", "UTF8",
                 "--locale=C")
        options = (f"-k {self.directory} -p {self.port} -c listen_addresses='' -c shared_buffers=256MB "
                   "-c max_wal_size=8GB -c maintenance_work_mem=256MB")
        self.run("pg_ctl", "-D", f"{self.directory}/data", "-l", f"{self.directory}/log", "-o", options, "-w",
                 "start")
        self.url = f"postgresql://postgres@/postgres?host={self.directory}&port={self.port}"

    def run(self, program, *arguments):
        argv = [os.path.join(self.bin_dir, program), *arguments]
        if self.as_nobody:
            argv = ["runuser", "-u", "nobody", "--"] + argv
        subprocess.run(argv, check=True, capture_output=True)

    def close(self):
        try:
            self.run("pg_ctl", "-D", f"{self.directory}/data", "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)


def text_copy_value(field):
    """One EPF field (bytes) in PostgreSQL's text COPY format: empty is NULL, escapes for \\, tab, LF, CR."""
    if not field:
        return b"\\N"
    return (field.replace(b"\\", b"\\\\").replace(b"\t", b"\\t").replace(b"\n", b"\\n")
            .replace(b"\r", b"\\r"))


def convert(source, target):
    """Writes the data records of an EPF file as PostgreSQL text COPY lines, streaming; returns (columns, rows)."""
    columns, rows, rest = None, 0, b""
    with open(source, "rb") as f, open(target, "wb") as out:
        while True:
            chunk = f.read(1 << 24)
            records = (rest + chunk).split(b"\x02\n")
            rest = records.pop() if chunk else b""
            lines = []
            for record in records:
                if not record:
                    continue
                if record.startswith(b"#"):
                    if columns is None:
                        columns = record[1:].decode().split("\x01")
                    continue
                lines.append(b"\t".join(text_copy_value(field) for field in record.split(b"\x01")))
                rows += 1
            if lines:
                out.write(b"\n".join(lines) + b"\n")
            if not chunk:
                break
    return columns, rows


def column_type(name, table):
    if name in ("export_date", "application_id", "storefront_id"):
        return "bigint"
    if name == "retail_price":
        return "numeric"
    return "text"


def bench_table(b, epf, cluster, psql, table, rows, reps):
    meta = b.table_input(epf, table, rows=rows)
    text_key = f"pgtext-{os.path.basename(os.path.dirname(meta['path']))}-{table}-r{rows}-{meta['bytes']}"

    def make_text(directory):
        # In a child process: the conversion's memory must not become part of this process's RSS, which every
        # process it forks afterwards (epf included) would report as its own peak (ru_maxrss survives exec).
        target = os.path.join(directory, "rows.txt")
        columns, count = json.loads(b.run([sys.executable, os.path.abspath(__file__), "convert", meta["path"],
                                           target]))
        return dict(columns=columns, rows=count, path=target)

    text_meta = b.cached(text_key, make_text)
    columns = text_meta["columns"]
    keys, indexes = KEYS[table], INDEXES[table]
    script = os.path.join(b.WORK, f"pg-{table}.sql")
    definitions = ", ".join(f'"{c}" {column_type(c, table)}' for c in columns)
    with open(script, "w") as f:
        f.write("\\set ON_ERROR_STOP on\n")
        f.write("DROP SCHEMA IF EXISTS bench_psql CASCADE;\nCREATE SCHEMA bench_psql;\n")
        f.write(f"CREATE TABLE bench_psql.{table} ({definitions});\n")
        f.write(f"\\copy bench_psql.{table} FROM '{text_meta['path']}'\n")
        f.write(f"ALTER TABLE bench_psql.{table} ADD PRIMARY KEY ({', '.join(keys)});\n")
        for number, index in enumerate(indexes):
            f.write(f"CREATE INDEX ON bench_psql.{table} ({', '.join(index)});\n")
        f.write(f"ANALYZE bench_psql.{table};\n")

    def drop(schema):
        b.run([psql, cluster.url, "-q", "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE"])

    def run_psql():
        b.warm(text_meta["path"])
        return b.measure([psql, cluster.url, "-q", "-f", script])

    def run_epf():
        drop("bench_epf")
        b.warm(meta["path"])
        work = b.fresh_dir(os.path.join(b.WORK, "pg-epf"))
        return b.measure([epf.path, "import", meta["path"], "--db", cluster.url, "--schema", "bench_epf",
                          "--quiet", "--force"], cwd=work)

    results = b.alternate([("psql", run_psql), ("epf", run_epf)], reps)
    ours, theirs = b.best_of(results["epf"]), b.best_of(results["psql"])
    drop("bench_psql")
    drop("bench_epf")
    if ours.returncode != 0:
        return b.add(b.Row(f"postgres import {table}", "", "", "", "", "error", ours.failure()))
    if theirs.returncode != 0:
        return b.add(b.Row(f"postgres import {table}", "", "", "", "", "error", "psql: " + theirs.failure()))
    count = meta["rows"]
    rate = count / ours.seconds
    ratio = ours.seconds / theirs.seconds
    b.add(b.Row(f"postgres import {table}, {count:,} rows", b.fmt_s(ours.seconds),
                f"psql \\copy + key + indexes {b.fmt_s(theirs.seconds)}", b.fmt_ratio(ratio),
                f"<= {TIME_TARGET}x", b.verdict(ratio <= TIME_TARGET)))
    reference = b.PYTHON_REFERENCE[table]
    b.add(b.Row(f"postgres import {table} rows/s", b.fmt_rate(rate, "rows/s"),
                f"Python fork {b.fmt_rate(reference, 'rows/s')}", b.fmt_ratio(rate / reference),
                f">= {SPEED_TARGET}x", b.verdict(rate / reference >= SPEED_TARGET),
                f"the server's own ceiling here: psql \\copy alone reaches {count / theirs.seconds:,.0f} rows/s, "
                f"{count / theirs.seconds / reference:.1f}x"))
    b.add(b.Row(f"postgres import {table} peak RSS", b.fmt_mb(ours.maxrss_kb), "", "",
                f"< {RSS_TARGET_MB} MB", b.verdict(ours.maxrss_kb / 1024 < RSS_TARGET_MB)))


def bench_postgres(b, epf, profile, reps):
    if not epf.has("import"):
        return b.unavailable("postgres import", epf.missing("import"))
    bin_dir = binaries()
    psql = shutil.which("psql")
    if bin_dir is None or psql is None:
        return b.unavailable("postgres import", "PostgreSQL not installed (apt-get install postgresql)")
    price_rows, detail_rows = profile["price_rows"], profile["detail_rows"]
    b.log(f"postgres: needs about {(price_rows * 200 + detail_rows * 5000) * 3 / 1e9:.1f} GB of disk "
          "(text copies of the inputs, two loaded copies in the cluster, WAL)")
    cluster = Cluster(b, bin_dir)
    try:
        bench_table(b, epf, cluster, psql, "application_price", price_rows, reps)
        bench_table(b, epf, cluster, psql, "application_detail", detail_rows, reps)
    finally:
        cluster.close()


if __name__ == "__main__":
    # `bench_postgres.py convert SOURCE TARGET`: the text conversion, run as a child of bench.py.
    if len(sys.argv) == 4 and sys.argv[1] == "convert":
        print(json.dumps(convert(sys.argv[2], sys.argv[3])))
