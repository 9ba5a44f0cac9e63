"""Apple's paths in the http section: `/lookup?id=<id>` and `/lookup?id=<id>&country=gb` against `/v1/apps/<id>`.

Runs inside bench_http with the same server, ids and wrk settings. The three shapes are measured in interleaved
rounds (baseline, /lookup, /lookup with a country, again and again, ROUNDS times) and each rate is the total of its
rounds, so a drift of the shared machine during the run affects every side alike. Targets: /lookup at least 0.9x
the `/v1/apps/<id>` rate, /lookup with a country at least 0.8x.
"""

import os

SHAPES = [
    ("itunes_lookup", "HTTP GET /lookup?id=<id> (Apple's path)", '"/lookup?id=" .. ids[math.random(#ids)]', 0.90),
    ("itunes_country", "HTTP GET /lookup?id=<id>&country=gb (Apple's path)",
     '"/lookup?id=" .. ids[math.random(#ids)] .. "&country=gb"', 0.80),
]
BASELINE = '"/v1/apps/" .. ids[math.random(#ids)]'
ROUNDS = 5


def bench_itunes(b, port, ids, work, seconds):
    """b is the bench module (wrk, add, Row, fmt_rate, fmt_ratio, verdict, WRK_LUA, log)."""
    def script(name, expression):
        path = os.path.join(work, f"{name}.lua")
        with open(path, "w") as f:
            f.write((b.WRK_LUA % ", ".join(ids)).replace('"/v1/apps/" .. ids[math.random(#ids)]', expression))
        return path

    url = f"http://127.0.0.1:{port}"
    shapes = [("itunes_baseline", "/v1/apps/<id>", BASELINE, None)] + SHAPES
    scripts = {name: script(name, expression) for name, _, expression, _ in shapes}
    # Interleaved rounds of at least 2 s each (rounds of 1 s moved the ratios by ±5% from run to run): ROUNDS
    # rounds of every shape, within about 3x `seconds` on the full profile.
    round_seconds = max(2, seconds // ROUNDS)
    totals = {name: dict(requests=0, duration_us=0, errors=0, p99=[]) for name, _, _, _ in shapes}
    for _ in range(ROUNDS):
        for name, _, _, _ in shapes:
            result = b.wrk(url, scripts[name], round_seconds)
            total = totals[name]
            total["requests"] += result["requests"]
            total["duration_us"] += result["duration_us"]
            total["errors"] += result["errors"]
            total["p99"].append(result["p99_us"])
    rate = {name: total["requests"] / (total["duration_us"] / 1e6) for name, total in totals.items()}
    baseline = rate["itunes_baseline"]
    b.log(f"  /v1/apps/<id> {baseline:.0f} req/s over {ROUNDS} rounds interleaved with the Apple paths")
    for name, label, _, target in SHAPES:
        ratio = rate[name] / baseline
        total = totals[name]
        b.add(b.Row(f"{label}: requests/s, same load", b.fmt_rate(rate[name], "req/s"),
                    f"{b.fmt_rate(baseline, 'req/s')} (/v1/apps/<id>, interleaved rounds)", b.fmt_ratio(ratio),
                    f"≥ {target:.2f}×", b.verdict(ratio >= target and total["errors"] == 0),
                    f"{ROUNDS} rounds of {round_seconds} s; worst round p99 {max(total['p99']) / 1000:.2f} ms, "
                    f"errors {total['errors']}"))
