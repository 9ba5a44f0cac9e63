"""The `ranks` section of bench.py: what `--history ranks` costs, what it takes on disk, and how fast it reads.

Inputs: `epf generate --layout v5 --apps A --only <the four v5 chart tables>`, the first full (day 0) and the
incrementals of days 1 ... D-1 (each day's four tables are FULL files, as Apple ships them). The generator ranks 5
storefronts x 46 genres x 4 charts at Apple's depth of 200 (`--apps`; `--scale` would shrink the depth), with
realistic movement (a random walk per app and storefront, daily jitter, launches that fade, removals). Apple's real
day is about 175 storefronts x 100 genres x 4 charts x 200 = 14 M entries: the per-entry figures here are
projected to it by entries, the app's query by the charts it is in (175/5 storefronts).

- Recording: the first days imported one after another into one database with `--history ranks`, against the
  same imports with `--history none` (each in a fresh database); per day the fastest of the repetitions; the ratio
  of the popularity imports' wall time from day 1 on (the budget: at most 1.15), over six weeks (three two-week
  periods, their keyframe days included; three weeks in the quick profile), and the first day's apart (every list a
  keyframe and every entry in the item index: once per database).
- Disk: bytes of the history's tables and indexes (SQLite's dbstat) per day and per entry, projected to 14 M
  entries a day (the budget: at most 50 MB a day).
- Reading (`epf-bench ranks`, EPFSchema's RankHistoryRead, warm, fastest of 3): a top app's and a median app's
  last 90 recorded days in every storefront, genre and chart (budget 50 ms at real scale: the lists' part of the
  measured time is projected by 175/5 storefronts, the item index's part, timed alone, is not: it reads one row per
  recorded day and chart table whatever the storefronts), and 200 charts on random recorded days (budget 20 ms).

Cached inputs live under benchmarks/out/inputs; the databases under benchmarks/out/work, deleted at the end.
"""

import os
import sqlite3

CHARTS = ["free_application_popularity_per_genre", "paid_application_popularity_per_genre",
          "free_ipad_application_popularity_per_genre", "paid_ipad_application_popularity_per_genre"]
PROFILES = {"full": dict(apps=100_000, days=90, baseline_days=43), "quick": dict(apps=20_000, days=21,
                                                                                 baseline_days=21)}
REAL_ENTRIES = 175 * 100 * 4 * 200
STOREFRONT_FACTOR = 175 / 5
RECORD_TARGET = 1.15
DISK_TARGET_MB = 50
APP_TARGET_MS = 50
CHART_TARGET_MS = 20


def day_inputs(b, epf, apps, days):
    """The feed folders of days 0 ... days-1, cached (generated once, each day its own folder)."""
    key = f"{epf.tag}epf-ranks-a{apps}-d{days}-s{b.SEED}"

    def make(directory):
        meta = {}
        for day in range(days):
            out = os.path.join(directory, f"day{day}")
            argv = [epf.path, "generate", out, "--layout", "v5", "--apps", str(apps), "--seed", str(b.SEED),
                    "--only", ",".join(CHARTS)]
            if day:
                argv += ["--incremental", "--day", str(day)]
            b.run(argv)
            feeds = [name for name in os.listdir(out) if name.startswith("popularity")]
            meta[f"day{day}"] = os.path.join(out, feeds[0])
        return meta

    return b.cached(key, make)


def import_days(b, epf, database, feeds, history):
    """Imports the days in order into a new database; returns each import's wall seconds."""
    b.remove_db(database)
    seconds = []
    for index, feed in enumerate(feeds):
        argv = [epf.path, "import", feed, "--db", database, "--quiet"]
        if index == 0:
            argv += ["--history", history]
        result = b.measure(argv)
        if result.returncode != 0:
            raise RuntimeError(f"import of {feed} failed: {result.failure()}")
        seconds.append(result.seconds)
    return seconds


def history_bytes(database):
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT name, sum(pgsize) FROM dbstat WHERE name LIKE 'epf_rank%' GROUP BY name").fetchall()
        entries = db.execute("SELECT sum(entries), count(DISTINCT export_date) FROM epf_rank_days").fetchone()
    return dict(rows), entries[0] or 0, entries[1] or 0


def indexed_items(db, day):
    """The items the item index lists on `day` (every item on the first recorded day): RankItemIndex's lists,
    each item a zigzag varint delta from the previous (the first from first_id), its chart count, then that many
    (storefront delta, genre) varint pairs."""
    def varints(data):
        value, shift = 0, 0
        for byte in data:
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                yield value
                value, shift = 0, 0

    def unzigzag(value):
        return (value >> 1) ^ -(value & 1)

    items = set()
    for first_id, data in db.execute("SELECT first_id, list FROM epf_rank_items WHERE export_date = ?1", (day,)):
        numbers = varints(data)
        item = first_id
        for delta in numbers:
            item += unzigzag(delta)
            items.add(item)
            for _ in range(2 * next(numbers)):
                next(numbers)
    return items


def sample_apps(database):
    """A top app (in the most charts on the last day, among the apps in a chart on the first day too) and a median
    one (the median of the apps in any chart on the last day, by the number of charts): the charts of the last day
    from the chart tables the last import left, the first day's from the item index."""
    with sqlite3.connect(database) as db:
        now = " UNION ALL ".join(f"SELECT application_id AS id FROM {table}" for table in CHARTS)
        counts = db.execute(f"SELECT id, count(*) AS n FROM ({now}) GROUP BY id ORDER BY n, id").fetchall()
        first = db.execute("SELECT min(export_date) FROM epf_rank_days").fetchone()[0]
        steady = indexed_items(db, first)
    top = [(n, -id) for id, n in counts if id in steady]
    return [-max(top)[1], counts[len(counts) // 2][0]] if top and counts else []


def bench_ranks(b, epf, profile_name, reps):
    profile = PROFILES[profile_name]
    if not epf.path or not epf.bench:
        return b.unavailable("ranks", "epf or epf-bench not built")
    feeds_meta = day_inputs(b, epf, profile["apps"], profile["days"])
    feeds = [feeds_meta[f"day{d}"] for d in range(profile["days"])]
    work = os.path.join(b.WORK, "ranks")
    b.fresh_dir(work)
    baseline_days = feeds[:profile["baseline_days"]]
    # Recording cost: the first days with and without history, alternately; per day the fastest of `reps`. The
    # first day is apart: every entry goes to the item index and every list is a keyframe.
    with_history, without = [], []
    for _ in range(max(1, reps)):
        without.append(import_days(b, epf, os.path.join(work, "none.sqlite"), baseline_days, "none"))
        with_history.append(import_days(b, epf, os.path.join(work, "ranks.sqlite"), baseline_days, "ranks"))
    best_with = [min(run[day] for run in with_history) for day in range(len(baseline_days))]
    best_without = [min(run[day] for run in without) for day in range(len(baseline_days))]
    ratio = sum(best_with[1:]) / sum(best_without[1:])
    b.add(b.Row(f"--history ranks: days 1-{len(baseline_days) - 1} of the four v5 charts imported, wall time",
                b.fmt_s(sum(best_with[1:])), b.fmt_s(sum(best_without[1:])), b.fmt_ratio(ratio),
                f"<= {RECORD_TARGET}x", b.verdict(ratio <= RECORD_TARGET),
                f"--apps {profile['apps']}, 5 storefronts, depth 200; keyframe days 14, 28, ... included"))
    b.add(b.Row("--history ranks: the first day (every entry indexed, every list a keyframe)",
                b.fmt_s(best_with[0]), b.fmt_s(best_without[0]), b.fmt_ratio(best_with[0] / best_without[0]),
                "", "info", "once per database"))
    # The rest of the days, into the database with history.
    database = os.path.join(work, "ranks.sqlite")
    for feed in feeds[len(baseline_days):]:
        b.run([epf.path, "import", feed, "--db", database, "--quiet"])
    sizes, entries, days = history_bytes(database)
    total = sum(sizes.values())
    per_entry = total / entries if entries else 0
    per_day_real = per_entry * REAL_ENTRIES / 1e6
    detail = ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in sorted(sizes.items()))
    b.add(b.Row(f"rank history on disk after {days} days ({entries / max(days, 1):,.0f} entries a day)",
                f"{total / 1e6:.1f} MB, {per_entry:.2f} B/entry", "", "",
                f"<= {DISK_TARGET_MB} MB/day at 14 M entries", b.verdict(per_day_real <= DISK_TARGET_MB),
                f"projected {per_day_real:.1f} MB a day at 14 M entries ({detail})"))
    apps = sample_apps(database)
    ids = os.path.join(work, "ids.txt")
    with open(ids, "w") as f:
        f.write("\n".join(str(a) for a in apps) + "\n")
    lines = b.run([epf.bench, "ranks", database, "--ids", ids, "--days", "90", "--charts", "200"]).splitlines()
    for label, line in zip(["top", "median"], lines):
        values = dict(part.split("=", 1) for part in line.split())
        ms = float(values["ms"])
        index_ms = min(ms, float(values["index_ms"]))
        # The item index is read once per recorded day and chart table whatever the storefronts (rows of the same
        # size, a level deeper at most); the lists read grow with the charts the app is in.
        projected = index_ms + (ms - index_ms) * STOREFRONT_FACTOR
        b.add(b.Row(f"a {label} app's last {min(days, 90)} days in every chart (RankHistoryRead.history)",
                    f"{ms:.2f} ms", "", "", f"<= {APP_TARGET_MS} ms at 175 storefronts",
                    b.verdict(projected <= APP_TARGET_MS),
                    f"{values['points']} points in {values['keys']} charts; the item index {index_ms:.2f} ms, the "
                    f"lists x{STOREFRONT_FACTOR:.0f} storefronts: projected {projected:.1f} ms"))
    charts = dict(part.split("=", 1) for part in lines[-1].split())
    b.add(b.Row("a chart on a random recorded day (RankHistoryRead.chart), 200 draws",
                f"median {float(charts['median_ms']):.3f} ms, max {float(charts['max_ms']):.3f} ms", "", "",
                f"<= {CHART_TARGET_MS} ms", b.verdict(float(charts["max_ms"]) <= CHART_TARGET_MS),
                f"{charts['entries']} entries read"))
    b.remove_db(os.path.join(work, "none.sqlite"))
    b.remove_db(database)
