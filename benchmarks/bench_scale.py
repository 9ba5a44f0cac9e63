"""The scale section of the epf benchmarks (issue 10): a whole weekly export, from .tbz to served.

For each fraction F of Apple's real weekly full (default 1/16 and 1/8; --quick 1/256 and 1/128):

- `epf generate --layout v5 --scale F` writes the full (per-table .tbz + .md5) and its day-1 incremental, cached
  under benchmarks/out/inputs keyed by a hash of the generator's sources and the options;
- `epf sync` of that mirror into a fresh database is timed until `epf serve` answers /v1/apps/{id}, with the
  phases `epf sync --json` reports, peak RSS, CPU use ((user + sys) / wall: 2.0 is both cores busy) and the disk
  high-water mark of the database directory (database, journal, WAL, SQLite's temp files) against the final size;
- the daily incremental is then applied with `epf sync` of the same mirror plus its incremental/ directory.

Then each phase's growth between the two fractions is checked against linear, and the real-scale times are
projected (a straight line through the two measurements, evaluated at F = 1) against the targets: full under
20 minutes, daily under 3 minutes, peak RSS under 300 MB, disk high-water at most 2x the final database.

With --variants "NAME=ARGS,...", each fraction's full and daily syncs run once per variant, ARGS added to every
`epf sync` of it, each on a fresh database; each variant gets these rows and projections, and every variant after
the first is compared to the first (time, final database size, projected real-scale full and daily).

Called from bench.py with the bench module itself (`h`) for its helpers and its table of rows.
"""

import fcntl
import fractions
import glob
import hashlib
import json
import math
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import threading
import time
import urllib.error
import urllib.request

SEED = 42
DAY = 1
FULL_TARGET_S = 20 * 60
DAILY_TARGET_S = 3 * 60
RSS_TARGET_MB = 300
DISK_TARGET = 2.0
# Phases of `epf sync --json` ("phases"), in the order they run, with the label printed.
PHASES = [("reading", "reading (parse + waiting for bzip2)"), ("inserting", "inserting rows"),
          ("indexes", "index builds"), ("committing", "commits and swaps"), ("searchIndex", "search index"),
          ("checkpoint", "WAL checkpoint"), ("lookupDocuments", "lookup documents"), ("other", "other")]
# Phases of "phasesCPU": process CPU seconds, which other users of the machine do not inflate.
CPU_PHASES = [("loading", "table loads (bzip2 + parse + insert)"), ("indexes", "index builds"),
              ("committing", "commits and swaps"), ("searchIndex", "search index"), ("checkpoint", "WAL checkpoint"),
              ("lookupDocuments", "lookup documents"), ("other", "other")]
# Bytes per unit of F, from a measured 1/128 run, with headroom: the cached inputs (.tbz of the full and the
# daily) and the work directory's high-water mark (database, journal, WAL, temp files).
INPUT_BYTES_PER_F = 6_000_000_000
WORK_BYTES_PER_F = 120_000_000_000


def parse_fractions(text):
    values = []
    for item in text.split(","):
        value = fractions.Fraction(item.strip())
        if value <= 0:
            raise ValueError(f"fraction {item} must be above 0")
        values.append(value)
    return sorted(values)


def generator_version(h):
    """A hash of the generator's sources: a new generator never reuses inputs made by an older one."""
    digest = hashlib.sha1()
    # Apple's storefront list, which the generator writes its feeds from, lives in EPFFormat.
    sources = glob.glob(os.path.join(h.ROOT, "Sources", "EPFGenerator", "*.swift")) + \
        [os.path.join(h.ROOT, "Sources", "EPFFormat", "AppleStorefronts.swift")]
    for path in sorted(sources):
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:10]


def label(fraction):
    return f"{fraction.numerator}/{fraction.denominator}"


def tree_bytes(path):
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(directory, name))
            except OSError:
                pass
    return total


def scale_inputs(h, epf, fraction):
    """The cached full mirror and day-1 incremental of one fraction; returns their meta."""
    key = f"{epf.tag}scale-g{generator_version(h)}-f{fraction.numerator}_{fraction.denominator}-s{SEED}-d{DAY}"

    def make(directory):
        full = os.path.join(directory, "full")
        daily = os.path.join(directory, "daily")
        started = time.monotonic()
        report = json.loads(h.run([epf.path, "generate", full, "--layout", "v5", "--scale", label(fraction),
                                   "--seed", str(SEED), "--threads", "2", "--json"]))
        full_seconds = time.monotonic() - started
        date = report["exportDate"]
        started = time.monotonic()
        day_dir = os.path.join(daily, "incremental", "PLACEHOLDER")
        incremental = json.loads(h.run([epf.path, "generate", day_dir, "--layout", "v5", "--scale",
                                        label(fraction), "--seed", str(SEED), "--threads", "2", "--incremental",
                                        "--day", str(DAY), "--json"]))
        # The incremental's directory is named after its own date, as in Apple's tree.
        stamp = time.strftime("%Y%m%d", time.gmtime(incremental["exportDate"] / 1000))
        os.rename(day_dir, os.path.join(daily, "incremental", stamp))
        daily_seconds = time.monotonic() - started
        rows = {t["table"]: t["rows"] for t in report["tables"]}
        daily_rows = {t["table"]: t["rows"] for t in incremental["tables"]}
        return dict(full=full, daily=daily, date=date, apps=report["apps"], rows=rows, daily_rows=daily_rows,
                    uncompressed=report["uncompressedBytes"], tbz=tree_bytes(full), daily_tbz=tree_bytes(daily),
                    generate_seconds=full_seconds, daily_generate_seconds=daily_seconds)

    # One generator per input: a second run (or a pre-generation in the background) waits for the first.
    with open(os.path.join(h.INPUTS, key + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return h.cached(key, make)


class Watcher:
    """Polls a running process: peak RSS (VmHWM) and the disk its work directory holds, including files the
    process keeps open after unlinking them (SQLite's temp files)."""

    def __init__(self, pid, directory):
        self.pid, self.directory = pid, os.path.realpath(directory)
        self.peak_disk = 0
        self.peak_rss_kb = 0
        # Peak of the process's own memory (RssAnon): VmHWM also counts database pages SQLite reads through a
        # memory map, which are file cache the kernel can drop.
        self.peak_anon_kb = 0
        # CPU seconds per thread (the last value seen): the main thread inserts, others decompress and build.
        self.thread_cpu = {}
        self.tick = os.sysconf("SC_CLK_TCK")
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def sample(self):
        seen = {}
        for directory, _, files in os.walk(self.directory):
            for name in files:
                try:
                    info = os.stat(os.path.join(directory, name))
                except OSError:
                    continue
                seen[(info.st_dev, info.st_ino)] = info.st_blocks * 512
        fd_dir = f"/proc/{self.pid}/fd"
        try:
            descriptors = os.listdir(fd_dir)
        except OSError:
            descriptors = []
        for descriptor in descriptors:
            path = os.path.join(fd_dir, descriptor)
            try:
                target = os.readlink(path)
                if not target.startswith(self.directory):
                    continue
                info = os.stat(path)
            except OSError:
                continue
            seen[(info.st_dev, info.st_ino)] = info.st_blocks * 512
        self.peak_disk = max(self.peak_disk, sum(seen.values()))
        try:
            tasks = os.listdir(f"/proc/{self.pid}/task")
        except OSError:
            tasks = []
        for task in tasks:
            try:
                with open(f"/proc/{self.pid}/task/{task}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                self.thread_cpu[task] = (int(fields[11]) + int(fields[12])) / self.tick
            except (OSError, IndexError, ValueError):
                pass
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        self.peak_rss_kb = max(self.peak_rss_kb, int(line.split()[1]))
                    elif line.startswith("RssAnon:"):
                        self.peak_anon_kb = max(self.peak_anon_kb, int(line.split()[1]))
        except OSError:
            pass

    def loop(self):
        while not self.done.is_set():
            self.sample()
            self.done.wait(0.25)

    def stop(self):
        self.done.set()
        self.thread.join()


def timed_sync(h, epf, root, database, work, variant_args=()):
    """Runs `epf sync ROOT --json` plus the variant's arguments; returns (seconds, report, peak RSS kB, CPU seconds, disk high-water, CPU
    seconds of the main thread, peak RssAnon kB)."""
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp, exist_ok=True)
    env = dict(os.environ, SQLITE_TMPDIR=tmp, TMPDIR=tmp)
    env.pop("EPF_DB", None)
    with open(os.path.join(work, "sync.out"), "w+") as out, open(os.path.join(work, "sync.err"), "w") as err:
        started = time.monotonic()
        # EPF_SCALE_SYNC_ARGS adds options to every sync, e.g. "--no-read-ahead" to measure without read-ahead.
        extra = os.environ.get("EPF_SCALE_SYNC_ARGS", "").split()
        process = subprocess.Popen([epf.path, "sync", root, "--db", database, "--json", "--quiet", *variant_args,
                                    *extra],
                                   stdout=out, stderr=err, env=env)
        watcher = Watcher(process.pid, work)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.monotonic() - started
        watcher.stop()
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if code != 0:
        with open(os.path.join(work, "sync.err")) as f:
            raise RuntimeError(f"epf sync exit {code}: {f.read().strip()[-300:]}")
    report = json.loads(text)
    cpu = usage.ru_utime + usage.ru_stime
    main = watcher.thread_cpu.get(str(process.pid), 0.0)
    return (seconds, report, max(watcher.peak_rss_kb, usage.ru_maxrss), cpu, watcher.peak_disk, main,
            watcher.peak_anon_kb)


def time_to_serve(h, epf, database, app_id, work):
    """Seconds from starting `epf serve` to a 200 for /v1/apps/{id}."""
    port = h.free_port()
    with open(os.path.join(work, "serve.log"), "w") as log:
        started = time.monotonic()
        server = subprocess.Popen([epf.path, "serve", "--db", database, "--host", "127.0.0.1", "--port", str(port),
                                   "--threads", "2"], stdout=log, stderr=subprocess.STDOUT)
        try:
            while time.monotonic() - started < 120:
                if server.poll() is not None:
                    raise RuntimeError(f"epf serve exited {server.returncode}; see {work}/serve.log")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/apps/{app_id}", timeout=5) as answer:
                        if answer.status == 200 and answer.read():
                            return time.monotonic() - started
                except (urllib.error.URLError, ConnectionError, OSError):
                    pass
                time.sleep(0.02)
            raise RuntimeError("epf serve did not answer within 120 s")
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def database_bytes(database):
    return sum(os.path.getsize(p) for p in (database, database + "-wal") if os.path.exists(p))


def middle_app(database):
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        count = connection.execute("SELECT count(*) FROM application").fetchone()[0]
        return connection.execute("SELECT application_id FROM application ORDER BY application_id "
                                  "LIMIT 1 OFFSET ?", (count // 2,)).fetchone()[0]
    finally:
        connection.close()


def measure_fraction(h, epf, fraction, inputs, variant=("", [])):
    """The full sync and then the daily of one fraction into a fresh database of its own, deleted at the end."""
    name, variant_args = variant
    work = h.fresh_dir(os.path.join(h.WORK, f"scale-{fraction.numerator}_{fraction.denominator}"))
    database = os.path.join(work, "epf.sqlite")
    h.log(f"scale {label(fraction)}{tag(name)}: epf sync {' '.join(variant_args)}{' ' if variant_args else ''}of "
          f"{inputs['apps']:,} apps, {inputs['rows'].get('application_price', 0):,} price rows "
          f"({inputs['tbz'] / 1e6:.0f} MB of .tbz)")
    # The machine is shared: the load average before each full sync tells which pairs of runs are comparable.
    load = os.getloadavg()[0]
    seconds, report, rss_kb, cpu, peak_disk, main_cpu, anon_kb = timed_sync(h, epf, inputs["full"], database, work,
                                                                            variant_args)
    final_db = database_bytes(database)
    app_id = middle_app(database)
    serve_seconds = time_to_serve(h, epf, database, app_id, work)
    # What the sync would take on an idle 2-core machine (the machine is shared, so wall times move with the
    # other users' load): the longer of the main thread (parse, insert, build) and the other threads (bzip2 on
    # one prefetch thread per table, as now); with bzip2 spread over both cores, max(main thread, all / 2).
    idle = max(main_cpu, cpu - main_cpu) + serve_seconds
    both = max(main_cpu, cpu / 2) + serve_seconds
    full = dict(seconds=seconds, serve=serve_seconds, total=seconds + serve_seconds, rss_kb=rss_kb, anon_kb=anon_kb,
                cpu=cpu,
                main_cpu=main_cpu, idle=idle, both=both, disk=peak_disk, db=final_db, phases=report.get("phases", {}),
                cpu_phases=cpu_phases(report), ok=report_ok(report), left_out=left_out(report), load=load)

    # The daily: the same mirror (linked, so the ledger sees the same files) plus its incremental/ directory.
    mirror = h.fresh_dir(os.path.join(work, "mirror"))
    for entry in os.listdir(inputs["full"]):
        os.symlink(os.path.join(inputs["full"], entry), os.path.join(mirror, entry))
    os.symlink(os.path.join(inputs["daily"], "incremental"), os.path.join(mirror, "incremental"))
    daily_work = os.path.join(work, "daily")
    os.makedirs(daily_work)
    h.log(f"scale {label(fraction)}{tag(name)}: daily incremental ({sum(inputs['daily_rows'].values()):,} rows)")
    d_seconds, d_report, d_rss, d_cpu, _, d_main, d_anon = timed_sync(h, epf, mirror, database, daily_work,
                                                                      variant_args)
    applied = [o for o in d_report.get("outcomes", []) if o.get("status") == "applied"]
    daily = dict(seconds=d_seconds, rss_kb=d_rss, anon_kb=d_anon, cpu=d_cpu, main_cpu=d_main,
                 idle=max(d_main, d_cpu - d_main), phases=d_report.get("phases", {}), db=database_bytes(database),
                 left_out=left_out(d_report),
                 ok=report_ok(d_report) and bool(applied) and all(o.get("mode") == "INCREMENTAL" for o in applied))
    shutil.rmtree(work, ignore_errors=True)
    return dict(full=full, daily=daily)


def cpu_phases(report):
    phases = dict(report.get("phasesCPU", {}))
    if phases:
        phases["other"] = max(0.0, phases.get("total", 0) - sum(v for k, v in phases.items() if k != "total"))
    return phases


def left_out(report):
    """Records the variant's --storefronts / --languages left out while parsing, per table (`leftOut`)."""
    counts = {}
    for outcome in report.get("outcomes", []):
        if outcome.get("leftOut"):
            counts[outcome.get("table", "?")] = counts.get(outcome.get("table", "?"), 0) + outcome["leftOut"]
    return counts


def report_ok(report):
    return not report.get("fileErrors") and not any(o.get("status") == "failed" for o in report.get("outcomes", []))


def phase_text(phases, names=PHASES):
    return ", ".join(f"{name} {phases.get(key, 0):.1f}s" for key, name in
                     [(k, n.split(" (")[0]) for k, n in names] if phases.get(key, 0) >= 0.05)


def projection(points, key):
    """Real scale (F = 1) from the two largest fractions: the larger of a straight line through them and the
    larger one times 1/F (a line through two noisy points can promise less than proportional growth); also the
    growth exponent and the proportional figure."""
    (f1, t1), (f2, t2) = [(float(f), key(m)) for f, m in points[-2:]]
    slope = (t2 - t1) / (f2 - f1)
    # A shrinking time means the machine's load changed between the runs: scale the larger run instead.
    linear = max(t2 + slope * (1 - f2), t2 / f2)
    exponent = math.log(t2 / t1) / math.log(f2 / f1) if t1 > 0 and t2 > 0 else float("nan")
    return linear, exponent, t2 / f2


def parse_variants(text):
    """`--variants "NAME=ARGS,NAME=ARGS"`: named sets of extra `epf sync` arguments, measured in turn on the same
    inputs; the first is the baseline the others are compared to. A comma starts the next variant only when
    `NAME=` follows it (a name holds no ',', ';' or '='), so ARGS may hold commas:
    "all=,5 storefronts=--storefronts us,gb,jp,de,fr". ';' also separates. ARGS are split as a shell would.
    None or empty: one unnamed variant without extra arguments (the section's rows as before)."""
    if not text or not text.strip():
        return [("", [])]
    variants = []
    for item in re.split(r";|,(?=[^,;=]*=)", text):
        if not item.strip():
            continue
        name, separator, args = item.partition("=")
        name = name.strip()
        if not separator or not name:
            raise ValueError(f"variant '{item}' is not NAME=ARGS")
        if name.startswith("-"):
            raise ValueError(f"variant name '{name}' looks like an option: give a variant's options as "
                             f"'--option value', not '--option=value', after the first")
        if name in (n for n, _ in variants):
            raise ValueError(f"variant '{name}' given twice")
        variants.append((name, shlex.split(args)))
    if not variants:
        raise ValueError(f"no variant in '{text}'")
    return variants


def tag(name):
    """The variant's name as it follows a figure's fraction in a row: '' for the unnamed single variant."""
    return f" [{name}]" if name else ""


def fraction_rows(h, fraction, inputs, result, name):
    """The rows of one fraction's full and daily sync of one variant."""
    full, daily = result["full"], result["daily"]
    at = f"{label(fraction)}{tag(name)}"
    size = (f"{inputs['apps']:,} apps, {inputs['rows'].get('application_price', 0):,} prices, "
            f"{inputs['rows'].get('application_detail', 0):,} details, {inputs['tbz'] / 1e6:,.0f} MB .tbz, "
            f"{inputs['uncompressed'] / 1e9:.2f} GB uncompressed")
    dropped = sum(full["left_out"].values())
    h.add(h.Row(f"scale {at}: epf sync full .tbz mirror until serve answers ({size})",
                h.fmt_s(full["total"]), "", "", "", "info" if full["ok"] else "FAIL",
                f"load {full['load']:.1f} at start; sync {full['seconds']:.1f}s + serve {full['serve'] * 1000:.0f} ms; "
                f"CPU {full['cpu']:.1f}s = "
                f"{full['cpu'] / full['seconds']:.2f} cores, main thread {full['main_cpu']:.1f}s, so "
                f"{full['idle']:.1f}s on an idle 2-core machine ({full['both']:.1f}s with bzip2 on both cores); "
                f"wall: {phase_text(full['phases'])}; CPU: "
                f"{phase_text(full['cpu_phases'], CPU_PHASES)}"
                + (f"; left out {dropped:,} records ({left_out_text(full['left_out'])})" if dropped else "")))
    peak = max(full["rss_kb"], daily["rss_kb"])
    h.add(h.Row(f"scale {at}: peak RSS of epf sync, full and daily", h.fmt_mb(peak), "", "",
                f"< {RSS_TARGET_MB} MB", h.verdict(peak / 1024 < RSS_TARGET_MB),
                f"full {h.fmt_mb(full['rss_kb'])}, own memory (RssAnon) {h.fmt_mb(full['anon_kb'])}; daily "
                f"{h.fmt_mb(daily['rss_kb'])}, RssAnon {h.fmt_mb(daily['anon_kb'])}"))
    ratio = full["disk"] / full["db"] if full["db"] else float("inf")
    h.add(h.Row(f"scale {at}: disk high-water (db, journal, WAL, temp) vs final database",
                f"{full['disk'] / 1e9:.2f} GB", f"{full['db'] / 1e9:.2f} GB (final db)", h.fmt_ratio(ratio),
                f"≤ {DISK_TARGET:.1f}×", h.verdict(ratio <= DISK_TARGET),
                f"input {inputs['tbz'] / 1e6:,.0f} MB .tbz on top"))
    d_dropped = sum(daily["left_out"].values())
    h.add(h.Row(f"scale {at}: daily incremental via epf sync "
                f"({sum(inputs['daily_rows'].values()):,} rows, {inputs['daily_tbz'] / 1e6:,.1f} MB .tbz)",
                h.fmt_s(daily["seconds"]), "", "", "", "info" if daily["ok"] else "FAIL",
                f"CPU {daily['cpu']:.1f}s = {daily['cpu'] / daily['seconds']:.2f} cores, main thread "
                f"{daily['main_cpu']:.1f}s; {phase_text(daily['phases'])}"
                + (f"; left out {d_dropped:,} records" if d_dropped else "")))


def left_out_text(counts):
    return ", ".join(f"{table} {count:,}" for table, count in sorted(counts.items(), key=lambda kv: -kv[1]))


def summary_rows(h, points, name):
    """Growth between the two largest fractions and the real-scale projections of one variant."""
    small, large = points[-2][0], points[-1][0]
    ideal = float(large / small)
    faster = []
    notes = []
    # Growth per phase on the CPU clock when epf reports it (wall times move with the machine's other load).
    use_cpu = bool(points[-1][1]["full"]["cpu_phases"])
    names, field = (CPU_PHASES, "cpu_phases") if use_cpu else (PHASES, "phases")
    for key, phase in names:
        t1 = points[-2][1]["full"][field].get(key, 0)
        t2 = points[-1][1]["full"][field].get(key, 0)
        if t1 < 0.5 and t2 < 0.5:
            continue
        growth = t2 / t1 if t1 > 0 else float("inf")
        notes.append(f"{key} {growth:.2f}")
        if growth > ideal * 1.15 and t2 - t1 * ideal > 1:
            faster.append(f"{phase} {growth:.2f}×")
    t1, t2 = points[-2][1]["full"]["total"], points[-1][1]["full"]["total"]
    c1, c2 = points[-2][1]["full"]["cpu"], points[-1][1]["full"]["cpu"]
    h.add(h.Row(f"scale{tag(name)}: CPU time of the full sync, growth {label(small)} -> {label(large)} "
                f"(linear: {ideal:.1f}×)",
                h.fmt_ratio(c2 / c1), h.fmt_ratio(ideal), h.fmt_ratio(c2 / c1 / ideal), f"≤ {ideal * 1.15:.1f}×",
                h.verdict(c2 / c1 <= ideal * 1.15),
                ("faster than linear: " + ", ".join(faster) + "; " if faster else "")
                + f"per {'CPU' if use_cpu else 'wall'} phase: " + ", ".join(notes)))
    h.add(h.Row(f"scale{tag(name)}: wall time of the full sync, growth {label(small)} -> {label(large)} "
                f"(linear: {ideal:.1f}×)",
                h.fmt_ratio(t2 / t1), h.fmt_ratio(ideal), h.fmt_ratio(t2 / t1 / ideal), f"≤ {ideal * 1.15:.1f}×",
                h.verdict(t2 / t1 <= ideal * 1.15), "moves with the shared machine's load; see the CPU row"))

    linear, exponent, naive = projection(points, lambda m: m["full"]["total"])
    h.add(h.Row(f"scale{tag(name)}: projected real-scale full (2M apps, 350M prices), .tbz to served",
                f"{linear / 60:.1f} min", "", "", f"< {FULL_TARGET_S // 60} min (aim 15)",
                h.verdict(linear < FULL_TARGET_S),
                f"the larger of a line through {label(small)} and {label(large)} at 1.0 and x{float(1 / large):.0f} of "
                f"{label(large)}: {naive / 60:.1f} min; growth exponent {exponent:.2f} gives "
                f"{t2 * float(1 / large) ** exponent / 60:.1f} min"))
    idle, idle_exponent, _ = projection(points, lambda m: m["full"]["idle"])
    both = projection(points, lambda m: m["full"]["both"])[0]
    h.add(h.Row(f"scale{tag(name)}: projected real-scale full on an idle 2-core machine (from CPU times)",
                f"{idle / 60:.1f} min", "", "", f"< {FULL_TARGET_S // 60} min (aim 15)",
                h.verdict(idle < FULL_TARGET_S),
                f"max(main thread CPU, other threads' CPU) + serve, projected from {label(small)} and "
                f"{label(large)}; growth exponent {idle_exponent:.2f}; with bzip2 on both cores "
                f"(max(main thread, all / 2)): {both / 60:.1f} min"))
    d_linear, d_exponent, d_naive = projection(points, lambda m: m["daily"]["seconds"])
    h.add(h.Row(f"scale{tag(name)}: projected real-scale daily incremental", f"{d_linear / 60:.1f} min", "", "",
                f"< {DAILY_TARGET_S // 60} min", h.verdict(d_linear < DAILY_TARGET_S),
                f"x{float(1 / large):.0f} of {label(large)}: {d_naive / 60:.1f} min; growth exponent "
                f"{d_exponent:.2f}; idle-machine estimate "
                f"{projection(points, lambda m: m['daily']['idle'])[0] / 60:.1f} min"))
    peak = max(max(m["full"]["rss_kb"], m["daily"]["rss_kb"]) for _, m in points)
    rss_growth = points[-1][1]["full"]["rss_kb"] / max(1, points[-2][1]["full"]["rss_kb"])
    h.add(h.Row(f"scale{tag(name)}: peak RSS at every fraction", h.fmt_mb(peak), "", "", f"< {RSS_TARGET_MB} MB",
                h.verdict(peak / 1024 < RSS_TARGET_MB), f"grew {rss_growth:.2f}× from {label(small)} to "
                f"{label(large)}"))


def comparison_rows(h, fractions_list, variants, results):
    """Each variant against the first (baseline): per fraction the full sync's time (until served) and final
    database size and the daily's time; then the real-scale projections of both (`projection`, two fractions)."""
    base, _ = variants[0]
    for name, _ in variants[1:]:
        versus = f"{name} vs {base}"
        for fraction in fractions_list:
            ours, theirs = results[name][fraction], results[base][fraction]
            at = f"scale {label(fraction)}: {versus}"
            h.add(h.Row(f"{at}: full sync until served", h.fmt_s(ours["full"]["total"]),
                        f"{h.fmt_s(theirs['full']['total'])} ({base})",
                        h.fmt_ratio(ours["full"]["total"] / theirs["full"]["total"]), "", "info",
                        f"CPU {ours['full']['cpu']:.1f}s vs {theirs['full']['cpu']:.1f}s = "
                        f"{ours['full']['cpu'] / theirs['full']['cpu']:.2f}×; idle-machine estimate "
                        f"{ours['full']['idle']:.1f}s vs {theirs['full']['idle']:.1f}s = "
                        f"{ours['full']['idle'] / theirs['full']['idle']:.2f}×"))
            h.add(h.Row(f"{at}: final database size (incl. WAL)", f"{ours['full']['db'] / 1e9:.3f} GB",
                        f"{theirs['full']['db'] / 1e9:.3f} GB ({base})",
                        h.fmt_ratio(ours["full"]["db"] / theirs["full"]["db"]), "", "info",
                        f"after the daily: {ours['daily']['db'] / 1e9:.3f} GB vs {theirs['daily']['db'] / 1e9:.3f} GB"))
            h.add(h.Row(f"{at}: daily incremental", h.fmt_s(ours["daily"]["seconds"]),
                        f"{h.fmt_s(theirs['daily']['seconds'])} ({base})",
                        h.fmt_ratio(ours["daily"]["seconds"] / theirs["daily"]["seconds"]), "", "info",
                        f"CPU {ours['daily']['cpu']:.1f}s vs {theirs['daily']['cpu']:.1f}s"))
        if len(fractions_list) < 2:
            continue
        for what, key in (("full (.tbz to served)", lambda m: m["full"]["total"]),
                          ("full on an idle 2-core machine (from CPU times)", lambda m: m["full"]["idle"]),
                          ("daily incremental", lambda m: m["daily"]["seconds"])):
            ours = projection([(f, results[name][f]) for f in fractions_list], key)[0]
            theirs = projection([(f, results[base][f]) for f in fractions_list], key)[0]
            h.add(h.Row(f"scale: {versus}: projected real-scale {what}", f"{ours / 60:.1f} min",
                        f"{theirs / 60:.1f} min ({base})", h.fmt_ratio(ours / theirs), "", "info",
                        f"each projected from {label(fractions_list[-2])} and {label(fractions_list[-1])}"))


def bench_scale(h, epf, quick, fraction_text, variant_text=None):
    if not epf.has("generate") or not epf.has("sync") or not epf.has("serve"):
        h.unavailable("scale: weekly export .tbz to served", epf.missing("generate/sync/serve"))
        return
    fractions_list = parse_fractions(fraction_text or ("1/256,1/128" if quick else "1/16,1/8"))
    if len(fractions_list) < 2:
        raise ValueError("the scale section needs at least two fractions to check linearity")
    variants = parse_variants(variant_text)
    h.log(f"scale: fractions {', '.join(map(label, fractions_list))}; generator {generator_version(h)}"
          + ("; variants " + "; ".join(f"{n}: {' '.join(a) or '(no options)'}" for n, a in variants)
             if variants[0][0] else ""))
    need_inputs = sum(INPUT_BYTES_PER_F * float(f) for f in fractions_list
                      if not glob.glob(os.path.join(h.INPUTS, f"*scale-g{generator_version(h)}-"
                                                                f"f{f.numerator}_{f.denominator}-*", "meta.json")))
    # One database at a time: each variant's is deleted before the next starts.
    need_work = WORK_BYTES_PER_F * float(max(fractions_list))
    free = shutil.disk_usage(h.OUT).free
    h.log(f"scale: needs about {need_inputs / 1e9:.1f} GB for new cached inputs and {need_work / 1e9:.1f} GB "
          f"of work space (freed after each fraction and variant); {free / 1e9:.1f} GB free under {h.OUT}")
    if need_inputs + need_work > free:
        raise RuntimeError(f"not enough disk: needs {(need_inputs + need_work) / 1e9:.1f} GB, "
                           f"{free / 1e9:.1f} GB free; use smaller --fractions or free space")

    results = {name: {} for name, _ in variants}
    for fraction in fractions_list:
        inputs = scale_inputs(h, epf, fraction)
        # The variants one after the other on the same inputs, so each pair shares the machine's load of the moment.
        for variant in variants:
            result = measure_fraction(h, epf, fraction, inputs, variant)
            results[variant[0]][fraction] = result
            fraction_rows(h, fraction, inputs, result, variant[0])
        h.add(h.Row(f"scale {label(fraction)}: epf generate (cached input)",
                    h.fmt_s(inputs["generate_seconds"]), "", "", "", "info",
                    f"daily {inputs['daily_generate_seconds']:.1f}s"))

    for name, _ in variants:
        summary_rows(h, [(f, results[name][f]) for f in fractions_list], name)
    comparison_rows(h, fractions_list, variants, results)
