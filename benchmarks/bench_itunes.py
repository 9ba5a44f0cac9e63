"""Apple's paths in the http section: `/lookup?id=<id>` and `/lookup?id=<id>&country=gb` against `/v1/apps/<id>`.

Runs inside bench_http with the same server, ids and wrk settings. The baseline, `/v1/apps/<id>`, is measured
twice, before and after the two Apple shapes, and its mean is the denominator, so a drift of the shared machine
during the run affects both sides alike. Targets: /lookup at least 0.9x, /lookup with a country at least 0.8x.
"""

import os

SHAPES = [
    ("itunes_lookup", "HTTP GET /lookup?id=<id> (Apple's path)", '"/lookup?id=" .. ids[math.random(#ids)]', 0.90),
    ("itunes_country", "HTTP GET /lookup?id=<id>&country=gb (Apple's path)",
     '"/lookup?id=" .. ids[math.random(#ids)] .. "&country=gb"', 0.80),
]
BASELINE = '"/v1/apps/" .. ids[math.random(#ids)]'


def bench_itunes(b, port, ids, work, seconds):
    """b is the bench module (wrk, add, Row, fmt_rate, fmt_ratio, verdict, WRK_LUA, log)."""
    def script(name, expression):
        path = os.path.join(work, f"{name}.lua")
        with open(path, "w") as f:
            f.write((b.WRK_LUA % ", ".join(ids)).replace('"/v1/apps/" .. ids[math.random(#ids)]', expression))
        return path

    url = f"http://127.0.0.1:{port}"
    baseline_script = script("itunes_baseline", BASELINE)
    before = b.wrk(url, baseline_script, seconds)
    measured = [(label, target, b.wrk(url, script(name, expression), seconds)) for name, label, expression, target
                in SHAPES]
    after = b.wrk(url, baseline_script, seconds)
    baseline = (before["rps"] + after["rps"]) / 2
    b.log(f"  /v1/apps/<id> {before['rps']:.0f} and {after['rps']:.0f} req/s around the Apple paths")
    for label, target, result in measured:
        ratio = result["rps"] / baseline
        b.add(b.Row(f"{label}: requests/s, same load", b.fmt_rate(result["rps"], "req/s"),
                    f"{b.fmt_rate(baseline, 'req/s')} (/v1/apps/<id>, mean of before and after)", b.fmt_ratio(ratio),
                    f"≥ {target:.2f}×", b.verdict(ratio >= target and result["errors"] == 0),
                    f"p99 {result['p99_us'] / 1000:.2f} ms, errors {result['errors']}"))
