"""The fetch section: `epf fetch` against the test feed server throttled per connection, versus curl.

Apple's feed server is slow per connection, so the server here (benchmarks/feed-server, the same code as the tests'
Tests/EPFTestSupport/FeedServer.swift) sends at most RATE bytes per second on each connection. One random
(incompressible) file of SIZE bytes in the v5 layout, with its BSD .md5, is cached under benchmarks/out/inputs.
Timed: curl of the file on one connection (the baseline), epf fetch with --connections 8, epf fetch with
--connections 1. Targets: curl / epf x8 >= 5; epf x1 / curl <= 1.1.
"""

import hashlib
import os
import shutil
import subprocess

RATE = 5_000_000
SIZES = {"full": 200_000_000, "quick": 40_000_000}


def make_input(size):
    def make(directory):
        feed = os.path.join(directory, "current", "itunes20260105")
        os.makedirs(feed)
        path = os.path.join(feed, "application_detail.tbz")
        digest = hashlib.md5()
        with open(path, "wb") as f:
            left = size
            while left > 0:
                block = os.urandom(min(left, 1 << 24))
                digest.update(block)
                f.write(block)
                left -= len(block)
        with open(path + ".md5", "w") as f:
            f.write(f"MD5 (application_detail.tbz) = {digest.hexdigest()}\n")
        return dict(root=directory, path=path, md5=digest.hexdigest(), size=size)
    return make


def bench_fetch(epf, profile_name, b):
    """b is the bench module (log, add, Row, measure, cached, fresh_dir, ...)."""
    size = SIZES[profile_name]
    figure = f"fetch {size // 1_000_000} MB at {RATE // 1_000_000} MB/s per connection"
    if not epf.has("fetch"):
        return b.unavailable(figure, epf.missing("fetch"))
    server_bin = os.path.join(os.path.dirname(epf.path), "epf-feed-server")
    if not os.path.exists(server_bin):
        return b.unavailable(figure, "epf-feed-server not built")
    if not shutil.which("curl"):
        return b.unavailable(figure, "curl not installed")
    b.log(f"fetch: needs about {3 * size / 1e9:.1f} GB of disk (the input, one mirror, one curl copy)")
    meta = b.cached(f"{epf.tag}fetch-{size}", make_input(size))
    server = subprocess.Popen([server_bin, meta["root"], "--rate", str(RATE)], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline().strip()
        if not line.startswith("port="):
            return b.unavailable(figure, f"epf-feed-server did not start: {line!r}")
        base = f"http://127.0.0.1:{line[5:]}/current/"
        work = b.fresh_dir(os.path.join(b.WORK, "fetch"))

        def curl():
            target = os.path.join(work, "curl.tbz")
            result = b.measure(["curl", "-s", "-f", "-o", target, base + "itunes20260105/application_detail.tbz"])
            ok = result.returncode == 0 and os.path.getsize(target) == size
            if os.path.exists(target):
                os.remove(target)
            return result, ok

        def fetch(connections):
            mirror = b.fresh_dir(os.path.join(work, f"mirror{connections}"))
            result = b.measure([epf.path, "fetch", "--mirror", mirror, "--url", base, "--feeds", "itunes",
                                "--only", "application_detail", "--connections", str(connections), "--quiet",
                                "--db", os.path.join(work, "none.sqlite")], cwd=work)
            path = os.path.join(mirror, "itunes20260105", "application_detail.tbz")
            ok = result.returncode == 0 and os.path.exists(path) and os.path.getsize(path) == size
            shutil.rmtree(mirror, ignore_errors=True)
            return result, ok

        b.log("fetch: curl, one connection")
        baseline, curl_ok = curl()
        b.log("fetch: epf fetch --connections 8")
        eight, eight_ok = fetch(8)
        b.log("fetch: epf fetch --connections 1")
        one, one_ok = fetch(1)
        if not curl_ok:
            return b.unavailable(figure, "curl failed: " + baseline.failure())
        for result, ok, label in [(eight, eight_ok, "x8"), (one, one_ok, "x1")]:
            if not ok:
                b.add(b.Row(f"{figure}, epf {label}", "", "", "", "", "error", result.failure()))
        rate = lambda seconds: f"{size / 1e6 / seconds:.1f} MB/s"
        if eight_ok:
            ratio = baseline.seconds / eight.seconds
            b.add(b.Row(f"{figure}: epf --connections 8 vs curl", f"{b.fmt_s(eight.seconds)} ({rate(eight.seconds)})",
                        f"{b.fmt_s(baseline.seconds)} ({rate(baseline.seconds)})", b.fmt_ratio(ratio),
                        "curl/epf >= 5×", b.verdict(ratio >= 5)))
        if one_ok:
            ratio = one.seconds / baseline.seconds
            b.add(b.Row(f"{figure}: epf --connections 1 vs curl", f"{b.fmt_s(one.seconds)} ({rate(one.seconds)})",
                        f"{b.fmt_s(baseline.seconds)} ({rate(baseline.seconds)})", b.fmt_ratio(ratio),
                        "epf/curl <= 1.1×", b.verdict(ratio <= 1.1)))
        shutil.rmtree(work, ignore_errors=True)
    finally:
        server.kill()
        server.wait()
