"""The bzip2 section: epf's parallel bzip2 decoder against `bzip2 -dc` and `lbzip2 -d -n 2`.

One generated v5 application_detail.tbz (about BYTES of uncompressed rows, cached under benchmarks/out/inputs) is
decompressed to /dev/null by `epf-bench bunzip2 --threads N` (N = 1: the serial libbz2 reader; 2: one thread per
core here; 4: oversubscribed), by `bzip2 -dc` and by `lbzip2 -d -n 2`, interleaved, median of the runs.
Targets on 2 cores: epf with 2 threads >= 1.8x as fast as bzip2 -dc, and >= 0.8x (aim 1.0x) as fast as lbzip2.

The machine is shared and Linux groups CPU time by session (autogroup): while other sessions keep both cores busy,
a process gets its session's share whatever its thread count, and no parallel decoder can beat a serial one on
wall time. So each row also gives the CPU seconds (user + system) of the median run, and the table says what the
load was; the wall-time ratios mean what they say only on an otherwise idle machine.
"""

import os
import shutil
import subprocess
import tempfile
import time

BYTES = {"full": 200_000_000, "quick": 30_000_000}


def detail_tbz(epf, b, nbytes):
    """A v5 application_detail.tbz of about nbytes uncompressed, from `epf generate`."""
    key = f"{epf.tag}epf-application_detail-tbz-b{nbytes}-s{b.SEED}"

    def make(directory):
        b.generate_with_epf(epf, "application_detail", directory, nbytes=nbytes, layout="v5")
        path = b.find_table_file(directory, "application_detail", ".tbz")
        if path is None:
            raise RuntimeError("epf generate --layout v5 wrote no application_detail.tbz")
        return dict(path=path, bytes=os.path.getsize(path))

    return b.cached(key, make)


class Timed:
    """A finished run: wall and CPU seconds, peak RSS, and the last key=value line of stdout."""

    def __init__(self, argv):
        # GNU time reports the peak RSS of the command alone (ru_maxrss of a child forked from Python would count
        # Python's own pages before exec); it prints it as the last line of stderr.
        timer = ["/usr/bin/time", "-f", "maxrss_kb=%M"] if os.path.exists("/usr/bin/time") else []
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.monotonic()
            process = subprocess.Popen(timer + argv, stdout=out, stderr=err)
            _, status, usage = os.wait4(process.pid, 0)
            self.seconds = time.monotonic() - started
            self.cpu = usage.ru_utime + usage.ru_stime
            self.returncode = os.waitstatus_to_exitcode(status)
            out.seek(max(0, os.fstat(out.fileno()).st_size - 4096))
            lines = [line for line in out.read().decode(errors="replace").splitlines() if "=" in line]
            self.values = dict(item.split("=", 1) for item in lines[-1].split() if "=" in item) if lines else {}
            err.seek(0)
            self.stderr = err.read().decode(errors="replace")
            reported = [line for line in self.stderr.splitlines() if line.startswith("maxrss_kb=")]
            self.maxrss_kb = int(reported[-1][10:]) if reported else None

    def failure(self):
        return f"exit {self.returncode}: " + " / ".join(self.stderr.strip().splitlines()[-3:])[:300]


def bench_bzip2(epf, profile_name, reps, b):
    """b is the bench module (log, add, Row, measure, cached, ...)."""
    nbytes = BYTES[profile_name]
    figure = "bzip2 decompression, epf --threads 2"
    if not epf.bench:
        return b.unavailable(figure, "epf-bench not built", "≥ 1.80× bzip2")
    if not epf.has("generate"):
        return b.unavailable(figure, epf.missing("generate"), "≥ 1.80× bzip2")
    b.log(f"bzip2: needs about {nbytes * 0.15 / 1e6:.0f} MB of disk for the cached .tbz")
    archive = detail_tbz(epf, b, nbytes)
    path = archive["path"]
    b.warm(path)

    def run(argv):
        # Decompressed bytes go to a pipe that is drained into /dev/null by `cat`-like copying in the shell.
        return lambda: Timed(["sh", "-c", 'exec "$@" > /dev/null', "sh"] + argv)

    contenders = [("bzip2", run(["bzip2", "-dc", path]))]
    if shutil.which("lbzip2"):
        contenders.append(("lbzip2", run(["lbzip2", "-d", "-n", "2", "-c", path])))
    for threads in (1, 2, 4):
        contenders.append((f"epf{threads}", lambda t=threads: Timed([epf.bench, "bunzip2", path, "--threads", str(t)])))
    results = b.alternate(contenders, max(3, reps))
    median = {name: b.median_of(runs) for name, runs in results.items()}
    failed = [result for result in median.values() if result.returncode != 0]
    if failed:
        return b.add(b.Row(figure, "", "", "", "≥ 1.80× bzip2", "error", failed[0].failure()))
    output = int(median["epf2"].values.get("bytes", 0))
    size = f"{output / 1e6:,.0f} MB out of a {archive['bytes'] / 1e6:,.0f} MB .tbz"
    load = os.getloadavg()[0]

    def rate(result):
        memory = f", {b.fmt_mb(result.maxrss_kb)}" if result.maxrss_kb else ""
        return f"{b.fmt_s(result.seconds)} ({output / result.seconds / 1e6:,.0f} MB/s, CPU {result.cpu:.1f} s{memory})"

    ours, base = median["epf2"], median["bzip2"]
    speedup = base.seconds / ours.seconds
    spread = ", ".join(f"{name} {min(r.seconds for r in runs):.1f}-{max(r.seconds for r in runs):.1f} s"
                       for name, runs in results.items())
    b.add(b.Row(f"{figure} vs bzip2 -dc ({size})", rate(ours), f"{rate(base)} (bzip2 -dc)",
                b.fmt_ratio(speedup), "≥ 1.80×", b.verdict(speedup >= 1.8),
                f"median of {len(results['epf2'])} interleaved runs, load {load:.1f} after; {spread}"))
    if "lbzip2" in median:
        lbzip2 = median["lbzip2"]
        relative = lbzip2.seconds / ours.seconds
        b.add(b.Row(f"{figure} vs lbzip2 -d -n 2", rate(ours), f"{rate(lbzip2)} (lbzip2)",
                    b.fmt_ratio(relative), "≥ 0.80× (aim 1.00×)", b.verdict(relative >= 0.8)))
    else:
        b.unavailable(f"{figure} vs lbzip2 -d -n 2", "lbzip2 not installed (apt-get install lbzip2)",
                      "≥ 0.80× (aim 1.00×)")
    serial = median["epf1"]
    for threads in (1, 4):
        result = median[f"epf{threads}"]
        note = "the serial libbz2 reader" if threads == 1 else "more threads than cores"
        b.add(b.Row(f"bzip2 decompression, epf --threads {threads}", rate(result), f"{rate(serial)} (epf --threads 1)",
                    b.fmt_ratio(serial.seconds / result.seconds), "", "info", note))
    scan = Timed([epf.bench, "bunzip2", path, "--scan-only"])
    if scan.returncode == 0:
        b.add(b.Row("bzip2 block scan: finding and re-aligning blocks, no decoding (one thread)",
                    f"{float(scan.values.get('mbps', 0)):,.0f} MB/s", "", "", "", "info",
                    f"{scan.values.get('spans')} spans in {archive['bytes'] / 1e6:,.0f} MB compressed"))
