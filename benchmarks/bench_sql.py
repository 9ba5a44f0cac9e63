"""The `sql` section of bench.py: `epf sql` against the sqlite3 shell, the same query on the same file.

A generated feed (`epf generate --apps N --price-storefronts 40 --only application,application_price`: 200,000
apps and 8,000,000 prices, or 50,000 and 2,000,000 with --quick) is imported once per run; then each query runs
alternately as `epf sql QUERY --csv` and `sqlite3 FILE QUERY` (five times each), and the fastest of each counts.
Target: epf at most 1.05x the shell's wall time, per query (the note adds the ratio of the least CPU times):
- scan: a full scan of application_price with a filter and aggregates (prices compared as numbers);
- group by: the analyst's question of issue 32, grouping the 8 million rows by storefront;
- join: every price row joined to its application (a rowid lookup per row).
Both must print the same first value (the count). The feed is cached under benchmarks/out/inputs, keyed by the
generator's sources and its options; the database lives under benchmarks/out/work and is deleted at the end.
"""

import glob
import hashlib
import os
import shutil

TARGET = 1.05
APPS = {"full": 200_000, "quick": 50_000}
STOREFRONTS = 40
QUERIES = [
    ("scan", "SELECT count(*), sum(retail_price), max(retail_price) FROM application_price WHERE retail_price > 0"),
    ("group by", "SELECT storefront_id, count(*), avg(retail_price) FROM application_price GROUP BY storefront_id "
                 "ORDER BY 2 DESC LIMIT 3"),
    ("join", "SELECT count(*), max(length(a.title)), avg(p.retail_price) FROM application_price AS p "
             "JOIN application AS a ON a.application_id = p.application_id WHERE p.currency_code <> 'XXX'"),
]


def bench_sql(b, epf, profile_name, reps):
    apps = APPS[profile_name]
    figure = "epf sql vs the sqlite3 shell, same query and file"
    target = f"≤ {TARGET:.2f}×"
    if not epf.has("generate") or not epf.has("sql"):
        b.unavailable(figure, epf.missing("sql" if epf.has("generate") else "generate"), target)
        return
    if shutil.which("sqlite3") is None:
        b.unavailable(figure, "sqlite3 shell not installed", target)
        return
    feed = feed_input(b, epf, apps)
    work = b.fresh_dir(os.path.join(b.WORK, "sql"))
    try:
        database = os.path.join(work, "epf.sqlite")
        b.log(f"sql: importing {apps:,} apps x {STOREFRONTS} storefronts")
        b.run([epf.path, "import", feed["itunes"], feed["pricing"], "--db", database, "--quiet"])
        b.warm(database)
        rows = b.count_rows(database, "application_price") or 0
        for name, query in QUERIES:
            def ours():
                return b.measure([epf.path, "sql", query, "--csv", "--db", database])

            def shell():
                return b.measure(["sqlite3", "-csv", database, query])

            results = b.alternate([("shell", shell), ("ours", ours)], max(5, reps))
            base, mine = b.best_of(results["shell"]), b.best_of(results["ours"])
            row_figure = f"{figure}: {name} ({rows:,} price rows)"
            if base.returncode != 0 or mine.returncode != 0:
                failed = base if base.returncode != 0 else mine
                b.add(b.Row(row_figure, "", "", "", target, "error", failed.failure()))
                continue
            same = first_value(mine.stdout, header=True) == first_value(base.stdout, header=False)
            ratio = mine.seconds / base.seconds
            # CPU time as well: on a shared machine the wall time of one run moves by 10-30%.
            cpu = min(r.cpu_seconds for r in results["ours"]) / min(r.cpu_seconds for r in results["shell"])
            times = ", ".join(f"{r.seconds:.2f}" for r in results["ours"]) + " s vs " + \
                ", ".join(f"{r.seconds:.2f}" for r in results["shell"]) + " s"
            b.add(b.Row(row_figure, b.fmt_s(mine.seconds), f"{b.fmt_s(base.seconds)} (sqlite3)", b.fmt_ratio(ratio),
                        target, b.verdict(ratio <= TARGET and same),
                        f"fastest of {len(results['ours'])} alternating runs ({times}); least CPU time "
                        f"{cpu:.2f}× the shell's" + ("" if same else "; the answers differ")))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def first_value(output, header):
    """The first value of the first data line of CSV output (after the header line when there is one)."""
    lines = [line for line in output.splitlines() if line.strip()]
    lines = lines[1:] if header else lines
    return lines[0].split(",")[0] if lines else None


def generator_hash(b):
    """A hash of the generator's sources: a changed generator makes a new feed."""
    digest = hashlib.sha1()
    for path in sorted(glob.glob(os.path.join(b.ROOT, "Sources", "EPFGenerator", "*.swift"))):
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:10]


def feed_input(b, epf, apps):
    """The itunes and pricing directories of a generated full export, cached by what made them."""
    key = f"{epf.tag}sql-g{generator_hash(b)}-a{apps}-p{STOREFRONTS}-s{b.SEED}"

    def make(directory):
        b.run([epf.path, "generate", directory, "--apps", str(apps), "--price-storefronts", str(STOREFRONTS),
               "--seed", str(b.SEED), "--only", "application,application_price"])
        itunes = glob.glob(os.path.join(directory, "itunes*"))
        pricing = glob.glob(os.path.join(directory, "pricing*"))
        if not itunes or not pricing:
            raise RuntimeError(f"epf generate wrote no itunes/pricing directory under {directory}")
        return dict(itunes=itunes[0], pricing=pricing[0])

    return b.cached(key, make)
