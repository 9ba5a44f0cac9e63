"""The `validate` section of bench.py: UTF-8 + NUL validation speed, and `epf inspect` against the C scan.

Two figures, each against a baseline measured in the same run:

- `epf-bench validate` on generated mixed-script text (an `application_detail` table from `epf generate`:
  descriptions and release notes in many languages and scripts, emoji included), in 1 MiB chunks as the reading
  thread checks them. Target: at least 2.5 GB/s. The C library's memchr over the same bytes is shown for scale.
- `epf inspect` of a plain `application` file (reading, splitting, validation, the report) against
  `memchr_scan`, the C scan that locates the same records and fields in memory. Target: at least 40%.

`b` is the bench module (its helpers and result table); inputs are cached under benchmarks/out/inputs like the
other sections' and shared with the `parse` section where they are the same file.
"""

import os

VALIDATE_TARGET_GBPS = 2.5
INSPECT_TARGET_RATIO = 0.40


def bench_validate(b, epf, profile, reps):
    text_bytes = profile["parse_bytes"] // 2
    b.log(f"validate: needs about {(text_bytes + profile['parse_bytes']) / 1e6:,.0f} MB of disk for cached inputs "
          "(kept for later runs)")
    validation(b, epf, text_bytes, reps)
    inspect_against_scan(b, epf, profile, reps)


def validation(b, epf, nbytes, reps):
    figure = "UTF-8 + NUL validation, mixed-script text"
    target = f"≥ {VALIDATE_TARGET_GBPS} GB/s"
    if not epf.bench:
        b.unavailable(figure, "epf-bench not built", target)
        return
    if not epf.has("generate"):
        b.unavailable(figure, epf.missing("generate"), target)
        return
    source = b.table_input(epf, "application_detail", nbytes=nbytes)
    b.warm(source["path"])
    runs = [b.measure([epf.bench, "validate", source["path"], "--reps", "5"]) for _ in range(max(2, reps))]
    good = [r.kv() for r in runs if r.returncode == 0]
    if not good:
        b.add(b.Row(figure, "", "", "", target, "error", runs[0].failure()))
        return
    best = max(good, key=lambda kv: float(kv["gbps"]))
    gbps, memchr = float(best["gbps"]), float(best["memchr_gbps"])
    share = float(best["non_ascii"]) * 100
    figure += f" ({int(best['bytes']) / 1e6:,.0f} MB application_detail, {share:.0f}% non-ASCII bytes)"
    clean = best["clean"] == "true"
    cpu = max(float(kv.get("cpu_gbps", 0)) for kv in good)
    note = f"{cpu:.2f} GB/s by thread CPU time" if cpu else ""
    if not clean:
        note = "the generated text was reported not clean"
    b.add(b.Row(figure, f"{gbps:.2f} GB/s", f"{memchr:.2f} GB/s (C memchr, NUL only)", b.fmt_ratio(gbps / memchr),
                target, b.verdict(gbps >= VALIDATE_TARGET_GBPS and clean), note))


def inspect_against_scan(b, epf, profile, reps):
    figure = "epf inspect vs C memchr scan"
    target = f"≥ {INSPECT_TARGET_RATIO:.2f}×"
    if not epf.has("inspect"):
        b.unavailable(figure, epf.missing("inspect"), target)
        return
    source = b.table_input(epf, "application", nbytes=profile["parse_bytes"])
    figure += f" ({source['bytes'] / 1e6:,.0f} MB plain application)"
    b.warm(source["path"])
    scan = os.path.join(b.BIN, "memchr_scan")
    results = b.alternate([("c", lambda: b.measure([scan, source["path"], "--reps", "1"])),
                           ("ours", lambda: b.measure([epf.path, "inspect", source["path"]], discard_stdout=True))],
                          max(2, reps))
    scans = [r.kv() for r in results["c"] if r.returncode == 0]
    inspects = [r for r in results["ours"] if r.returncode in (0, 65)]
    if not scans or not inspects:
        failed = results["c"][0] if not scans else results["ours"][0]
        b.add(b.Row(figure, "", "", "", target, "error", failed.failure()))
        return
    c_gbps = max(float(kv["gbps"]) for kv in scans)
    ours = min(r.seconds for r in inspects)
    ours_gbps = source["bytes"] / ours / 1e9
    ratio = ours_gbps / c_gbps
    b.add(b.Row(figure, f"{ours_gbps:.2f} GB/s", f"{c_gbps:.2f} GB/s (C memchr, in memory)", b.fmt_ratio(ratio),
                target, b.verdict(ratio >= INSPECT_TARGET_RATIO),
                "whole run from the file incl. reading; best of each"))
