"""The `ranks-today` section of bench.py: an app's ranks today without rank history, at Apple's scale.

Inputs: `epf generate --layout v5 --scale F --only <the four v5 chart tables>` (full: F = 1, 175 storefronts x 46
genres x depth 200 = 1.61 M rows a table, 6.44 M in all; quick: F = 1/8, depth 25), day 0 and day 1, each a FULL
file per table as Apple ships them. Day 0 is imported, then day 1 over it (the daily import), with timings.

Without `--history ranks`, `epf ranks ID` reads each chart table's rows by app (ChartAppLists, made by each full
load of a chart table). The figures, each against a baseline measured in the same run:
- `epf ranks ID --json`, one process start to exit, for the app in the most charts and a median one, against the
  same command on a copy of the database without the lists (a full scan of the four tables, as before them) and
  against the sqlite3 shell answering one primary-key point query of one table (a process's floor).
- `GET /v1/apps/{id}/ranks` on `epf serve --cache-entries 0`: median and p99 of sequential requests on one
  keep-alive connection (the budget: 20 ms at real scale; projected by rows, an upper bound since an answer reads
  one list a table whatever the size).
- The daily import's wall time, and what an index on application_id would add to it instead (the four
  `CREATE INDEX` run by the sqlite3 shell on a copy of the imported database), for scale.

Cached inputs live under benchmarks/out/inputs; the databases under benchmarks/out/work, deleted at the end.
"""

import http.client
import os
import shutil
import subprocess
import time

CHARTS = ["free_application_popularity_per_genre", "paid_application_popularity_per_genre",
          "free_ipad_application_popularity_per_genre", "paid_ipad_application_popularity_per_genre"]
PROFILES = {"full": dict(scale="1", requests=300), "quick": dict(scale="1/8", requests=100)}
TARGET_MS = 20
# Apple's real day: about 175 storefronts x 100 genres x 200 rows in each of the four tables.
REAL_ROWS = 4 * 175 * 100 * 200


def inputs(b, epf, scale):
    key = f"{epf.tag}epf-ranks-today-s{scale.replace('/', 'of')}-seed{b.SEED}"

    def make(directory):
        meta = {}
        for day in (0, 1):
            out = os.path.join(directory, f"day{day}")
            argv = [epf.path, "generate", out, "--layout", "v5", "--scale", scale, "--seed", str(b.SEED),
                    "--only", ",".join(CHARTS)]
            if day:
                argv += ["--incremental", "--day", "1"]
            b.run(argv)
            feeds = [name for name in os.listdir(out) if name.startswith("popularity")]
            meta[f"day{day}"] = os.path.join(out, feeds[0])
        return meta

    return b.cached(key, make)


def sample_apps(database):
    """The app in the most charts today and the median app, by the number of charts."""
    union = " UNION ALL ".join(f"SELECT application_id AS id FROM {table}" for table in CHARTS)
    out = subprocess.run(["sqlite3", database, f"SELECT id FROM ({union}) GROUP BY id ORDER BY count(*), id"],
                         capture_output=True, text=True, check=True).stdout.split()
    return [int(out[-1]), int(out[len(out) // 2])] if out else []


def copy_db(b, source, target):
    b.remove_db(target)
    shutil.copyfile(source, target)


def served_latencies(b, epf, database, app, requests):
    """Seconds of each of `requests` sequential GET /v1/apps/{app}/ranks on one keep-alive connection."""
    process = subprocess.Popen([epf.path, "serve", "--db", database, "--port", "0", "--cache-entries", "0",
                                "--threads", "1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()
        port = int(line.rsplit(":", 1)[1].strip().rstrip("/"))
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        seconds = []
        for index in range(requests + 5):
            started = time.perf_counter()
            connection.request("GET", f"/v1/apps/{app}/ranks")
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"/v1/apps/{app}/ranks answered {response.status}")
            if index >= 5:
                seconds.append(time.perf_counter() - started)
        connection.close()
        return sorted(seconds)
    finally:
        process.terminate()
        process.wait()


def bench_ranks_today(b, epf, profile_name, reps):
    profile = PROFILES[profile_name]
    if not epf.path:
        return b.unavailable("ranks-today", "epf not built")
    if shutil.which("sqlite3") is None or shutil.which("hyperfine") is None:
        return b.unavailable("ranks-today", "needs the sqlite3 shell and hyperfine")
    feeds = inputs(b, epf, profile["scale"])
    work = os.path.join(b.WORK, "ranks-today")
    b.fresh_dir(work)
    day0 = os.path.join(work, "day0.sqlite")
    b.remove_db(day0)
    b.run([epf.path, "import", feeds["day0"], "--db", day0, "--quiet"])
    database = os.path.join(work, "today.sqlite")
    # The daily import, and what an index on the app would cost instead, alternately; the fastest of each.
    imports, indexes = [], []
    for _ in range(max(1, reps)):
        copy_db(b, day0, database)
        result = b.measure([epf.path, "import", feeds["day1"], "--db", database, "--quiet"])
        if result.returncode != 0:
            raise RuntimeError(f"import of {feeds['day1']} failed: {result.failure()}")
        imports.append(result.seconds)
        indexed = os.path.join(work, "indexed.sqlite")
        copy_db(b, database, indexed)
        sql = "; ".join(f"CREATE INDEX {table}__app ON {table}(application_id)" for table in CHARTS)
        indexes.append(b.measure(["sqlite3", indexed, sql]).seconds)
        b.remove_db(indexed)
    rows = int(subprocess.run(["sqlite3", database, "SELECT sum(entries) FROM epf_chart_app_stamps"],
                              capture_output=True, text=True, check=True).stdout.strip() or 0)
    b.add(b.Row(f"daily import of the four v5 charts ({rows:,} rows), with today's lists by app",
                b.fmt_s(min(imports)), b.fmt_s(min(indexes)), b.fmt_ratio(min(indexes) / min(imports)), "", "info",
                "baseline: the four CREATE INDEX (application_id) an index would add instead, sqlite3 shell"))
    factor = REAL_ROWS / max(rows, 1)
    scan = os.path.join(work, "scan.sqlite")
    copy_db(b, database, scan)
    b.run(["sqlite3", scan, "DROP TABLE epf_chart_app_lists; DROP TABLE epf_chart_app_stamps"])
    apps = sample_apps(database)
    runs = 15 if profile_name == "full" else 8
    for label, app in zip(["top", "median"], apps):
        ours, error = b.hyperfine_mean(f"{epf.path} ranks {app} --json --db {database}", runs)
        full, error2 = b.hyperfine_mean(f"{epf.path} ranks {app} --json --db {scan}", max(3, runs // 3))
        point_sql = (f"SELECT application_rank FROM {CHARTS[0]} WHERE storefront_id = 143441 AND genre_id = 36 "
                     f"AND application_id = {app}")
        floor, error3 = b.hyperfine_mean(f"sqlite3 {database} '{point_sql}'", runs)
        if ours is None or full is None or floor is None:
            b.unavailable(f"epf ranks ID, a {label} app", error or error2 or error3)
            continue
        b.add(b.Row(f"epf ranks ID --json, a {label} app, process start to exit, vs the same without the lists "
                    "(a full scan)", b.fmt_s(ours), b.fmt_s(full), b.fmt_ratio(full / ours), "", "info",
                    f"app {app}; the scan projected to Apple's {REAL_ROWS / 1e6:.0f} M rows: "
                    f"{full * factor * 1000:.0f} ms"))
        b.add(b.Row(f"epf ranks ID --json, a {label} app, vs the sqlite3 shell's one point query",
                    b.fmt_s(ours), b.fmt_s(floor), b.fmt_ratio(ours / floor), "", "info",
                    "both a process start to exit"))
    if apps:
        latencies = served_latencies(b, epf, database, apps[0], profile["requests"])
        median = latencies[len(latencies) // 2]
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        projected = p99 * factor
        b.add(b.Row("GET /v1/apps/{id}/ranks of the top app, sequential, response cache off",
                    f"median {median * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms", "", "", f"<= {TARGET_MS} ms",
                    b.verdict(projected <= TARGET_MS),
                    f"{len(latencies)} requests; p99 x{factor:.1f} for Apple's {REAL_ROWS / 1e6:.0f} M rows: "
                    f"{projected * 1000:.1f} ms (an upper bound: the read is one list a table whatever the rows)"))
    for path in (day0, database, scan):
        b.remove_db(path)
