"""The `changes` section of bench.py: what recording removals and additions costs a full import.

A second weekly full (`epf generate --week 1`: about 1% of the apps removed, a week of new apps added) replaces
the `application` table of a database holding the first full. The same `epf import` runs alternately with change
tracking (the default) and without it (`EPF_TRACK_CHANGES=0`, the baseline), each time on a fresh copy of the
database holding the first full. Target: at most 1.10x the baseline's wall time. An info row gives the time of
the commit phase, where the keys of the old and new tables are compared, and the changes recorded. Each figure is
the fastest of the alternating runs.

Inputs: the two `application` files (about 1.9 KB per app: 3.7 GB each for the full profile's 2,000,000 apps)
are cached under benchmarks/out/inputs; the databases live under benchmarks/out/work and are deleted at the end.
"""

import json
import os
import shutil
import sqlite3

TARGET = 1.10
APPS = {"full": 2_000_000, "quick": 50_000}
BYTES_PER_APP = 1_900


def bench_changes(b, epf, profile_name, reps):
    apps = APPS[profile_name]
    figure = f"full import replacing {apps:,} apps with change tracking vs without"
    target = f"≤ {TARGET:.2f}×"
    if not epf.has("generate") or not epf.has("changes"):
        b.unavailable(figure, epf.missing("changes" if epf.has("generate") else "generate"), target)
        return
    gigabytes = apps * BYTES_PER_APP / 1e9
    b.log(f"changes: needs about {2 * gigabytes:,.1f} GB of disk for cached inputs (kept) and "
          f"{4 * gigabytes:,.1f} GB for databases during the run (deleted)")
    first = full_input(b, epf, apps, week=0)
    second = full_input(b, epf, apps, week=1)
    work = b.fresh_dir(os.path.join(b.WORK, "changes"))
    try:
        template = os.path.join(work, "first.sqlite")
        b.log("changes: importing the first full (the database each timed import starts from)")
        b.run([epf.path, "import", first["path"], "--db", template])
        database = os.path.join(work, "db.sqlite")
        b.warm(second["path"])

        def importing(track):
            def run():
                b.remove_db(database)
                shutil.copyfile(template, database)
                b.log(f"changes: importing the second full {'with' if track else 'without'} change tracking")
                return b.measure(["env", f"EPF_TRACK_CHANGES={1 if track else 0}", epf.path, "import",
                                  second["path"], "--db", database, "--json"])
            return run

        results = b.alternate([("base", importing(False)), ("ours", importing(True))], max(2, reps))
        # The fastest run of each: on a shared machine the same import varies by 10-20% from run to run.
        base, ours = b.best_of(results["base"]), b.best_of(results["ours"])
        if base.returncode != 0 or ours.returncode != 0:
            failed = base if base.returncode != 0 else ours
            b.add(b.Row(figure, "", "", "", target, "error", failed.failure()))
            return
        changes = count_changes(database)
        ratio = ours.seconds / base.seconds
        times = ", ".join(f"{r.seconds:.1f}" for r in results["ours"]) + " s vs " + \
            ", ".join(f"{r.seconds:.1f}" for r in results["base"]) + " s"
        b.add(b.Row(f"{figure} (second full, {second['bytes'] / 1e9:,.2f} GB application)", b.fmt_s(ours.seconds),
                    f"{b.fmt_s(base.seconds)} (EPF_TRACK_CHANGES=0)", b.fmt_ratio(ratio), target,
                    b.verdict(ratio <= TARGET and changes["removed"] > 0),
                    f"fastest of {len(results['ours'])} alternating runs ({times}); recorded "
                    f"{changes['removed']:,} removed, {changes['added']:,} added"))
        ours_commit = [committing(r) for r in results["ours"]]
        base_commit = [committing(r) for r in results["base"]]
        b.add(b.Row("changes: commit phase of that import (the key comparison runs in the swap transaction)",
                    f"{min(ours_commit):.2f} s", f"{min(base_commit):.2f} s", "", "", "info",
                    f"added {min(ours_commit) - min(base_commit):.2f} s to a {ours.seconds:.1f} s import"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def full_input(b, epf, apps, week):
    """An `application` file of the full export of `week` (0: the first), cached."""
    key = f"{epf.tag}epf-application-a{apps}-s{b.SEED}-week{week}"

    def make(directory):
        b.run([epf.path, "generate", directory, "--apps", str(apps), "--seed", str(b.SEED), "--only", "application",
               "--week", str(week)])
        path = b.find_table_file(directory, "application")
        return dict(path=path, rows=b.records_written(path), bytes=os.path.getsize(path))

    return b.cached(key, make)


def committing(result):
    """Seconds of the commit phase in an `epf import --json` report."""
    try:
        return float(json.loads(result.stdout)["phases"]["committing"])
    except (ValueError, KeyError):
        return float("nan")


def count_changes(database):
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT change, count(*) FROM epf_changes GROUP BY change").fetchall()
    except sqlite3.Error:
        rows = []
    finally:
        connection.close()
    counts = dict(removed=0, added=0)
    counts.update({change: count for change, count in rows})
    return counts
