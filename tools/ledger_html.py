"""tools/ledger_html.py: the nightly report as one HTML page (docs/nightly.md), written by
`ledger.py report --html FILE`. Self-contained (inline CSS and SVG, no script, nothing fetched),
so it opens from a file on any machine and renders the same in a headless browser.

The page: the verdict banner; the night's sections; the per-suite table (tonight, and failures
last night); the fuzz table (executions, exec/s against last night's, features, new corpus
files, reproducers); the sanitizer steps; the benchmark table (tonight against last night, with
the noise threshold the ledger judged by); a small plot per kernel of its median time over the
recorded nights (the p10..p90 band shaded, tonight's point marked); and the markdown report in
full at the end (failures with their messages, findings with their replay commands)."""
import html

PLOT_W, PLOT_H, PAD_L, PAD_B, PAD_T = 260, 120, 46, 18, 8

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#1d2430;
max-width:1200px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid
#d8dde6;padding-bottom:3px} .meta{color:#5a6473;font-size:13px}
.verdict{padding:10px 14px;border-radius:6px;font-weight:600;margin:14px 0;font-size:15px}
.v0{background:#e3f4e6;color:#1d6b2f;border:1px solid #9fd4aa}
.v1{background:#fde4e2;color:#98231b;border:1px solid #f0a59e}
.v2{background:#fff1d6;color:#8a5a00;border:1px solid #f0cf86}
.v3{background:#ece7f6;color:#4b2f86;border:1px solid #bfb0e0}
table{border-collapse:collapse;font-size:13px;margin:4px 0}
th,td{border:1px solid #d8dde6;padding:3px 8px;text-align:left} th{background:#f1f3f7}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fde4e2} tr.slow td{background:#fff1d6} tr.fast td{background:#e3f4e6}
.grid{display:flex;flex-wrap:wrap;gap:10px} .plot{border:1px solid #d8dde6;border-radius:4px;
padding:4px 6px;background:#fff} .plot .t{font-size:11px;color:#1d2430;margin-bottom:2px;
max-width:260px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis}
pre{background:#f6f8fa;padding:10px;font-size:12px;overflow-x:auto;white-space:pre-wrap}
.small{font-size:12px;color:#5a6473}
"""


def esc(x):
    return html.escape(str(x))


def _num(x, fmt="{:,.0f}"):
    return "-" if x is None else fmt.format(x)


def table(head, rows, classes=None, numeric=()):
    out = ["<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"]
    for i, r in enumerate(rows):
        cls = (classes or [None] * len(rows))[i]
        out.append(f"<tr{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}>" + "".join(
            f"<td{' class=n' if j in numeric else ''}>{esc(c)}</td>" for j, c in enumerate(r))
            + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def plot(title, pts):
    """An SVG of one kernel over the nights. pts: [(label, median, p10, p90)], oldest first."""
    vals = [v for _, m, lo, hi in pts for v in (m, lo, hi) if v is not None]
    y0, y1 = min(vals), max(vals)
    if y1 - y0 < 1e-9 * max(1.0, abs(y1)):
        y0, y1 = y0 * 0.95, y1 * 1.05 + 1e-9
    pad = 0.08 * (y1 - y0)
    y0, y1 = y0 - pad, y1 + pad
    n = len(pts)
    iw, ih = PLOT_W - PAD_L - 6, PLOT_H - PAD_B - PAD_T
    X = lambda i: PAD_L + (iw * (i / (n - 1)) if n > 1 else iw / 2)
    Y = lambda v: PAD_T + ih * (1 - (v - y0) / (y1 - y0))
    s = [f'<svg width="{PLOT_W}" height="{PLOT_H}" xmlns="http://www.w3.org/2000/svg" '
         f'role="img" aria-label="{esc(title)}">',
         f'<rect x="{PAD_L}" y="{PAD_T}" width="{iw}" height="{ih}" fill="#fbfcfd" '
         'stroke="#d8dde6"/>']
    band = [(X(i), Y(hi)) for i, (_, _, lo, hi) in enumerate(pts) if hi is not None]
    band += [(X(i), Y(lo)) for i, (_, _, lo, hi) in reversed(list(enumerate(pts)))
             if lo is not None]
    if len(band) >= 4:
        s.append('<polygon fill="#cfe0f7" stroke="none" points="'
                 + " ".join(f"{x:.1f},{y:.1f}" for x, y in band) + '"/>')
    line = [(X(i), Y(m)) for i, (_, m, _, _) in enumerate(pts)]
    if n > 1:
        s.append('<polyline fill="none" stroke="#2f6fd0" stroke-width="1.6" points="'
                 + " ".join(f"{x:.1f},{y:.1f}" for x, y in line) + '"/>')
    for i, (x, y) in enumerate(line):
        last = i == n - 1
        s.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{3.2 if last else 2}" '
                 f'fill="{"#d0452f" if last else "#2f6fd0"}"><title>{esc(pts[i][0])}: '
                 f'{pts[i][1]:.2f} us</title></circle>')
    for v in (y1 - pad, y0 + pad):
        s.append(f'<text x="{PAD_L - 4}" y="{Y(v) + 4:.1f}" font-size="10" text-anchor="end" '
                 f'fill="#5a6473">{v:.3g}</text>')
    s.append(f'<text x="{PAD_L}" y="{PLOT_H - 4}" font-size="10" fill="#5a6473">'
             f'{esc(pts[0][0])}</text>')
    if n > 1:
        s.append(f'<text x="{PAD_L + iw}" y="{PLOT_H - 4}" font-size="10" text-anchor="end" '
                 f'fill="#5a6473">{esc(pts[-1][0])}</text>')
    s.append("</svg>")
    return "".join(s)


def render(records, code, verdict, md_text, bench_key, compare_bench, skipped_lines=0):
    """The page. records: the history's records, oldest first (the last is tonight)."""
    cur = records[-1]
    prev = records[-2] if len(records) > 1 else None
    t = cur.get("totals", {})
    out = ["<!doctype html><html><head><meta charset=\"utf-8\">",
           f"<title>Nightly ledger {esc(cur['commit'][:12])}</title>",
           f"<style>{CSS}</style></head><body>",
           f"<h1>Nightly ledger: {esc(cur['commit'][:12])} on {esc(cur.get('gpu') or '?')}</h1>",
           f"<div class=meta>Recorded {esc(cur.get('recorded_at', '?'))}"
           + (f", budget {cur['budget_min']:g} min" if cur.get("budget_min") else "")
           + (f"; against {esc(prev['commit'][:12])} recorded {esc(prev.get('recorded_at', '?'))}"
              if prev else "; first record") + f"; {len(records)} nights in the plots</div>",
           f"<div class='verdict v{code}'>Verdict: {esc(verdict)} (exit {code}) &mdash; "
           f"{t.get('passed', 0)} passed, {t.get('failed', 0)} failed, "
           f"{t.get('skipped', 0)} skipped</div>"]
    if cur.get("sections"):
        out.append("<h2>The night</h2>")
        out.append(table(["section", "start s", "end s", "note"],
                         [(s["section"], _num(s["start_s"]), _num(s["end_s"]), s["note"])
                          for s in cur["sections"]], numeric=(1, 2)))
    out.append("<h2>Suites</h2>")
    rows, cls = [], []
    n_san = sum(1 for s in cur["suites"] if s.startswith("sanitize_"))
    for s, c in sorted(cur["suites"].items()):
        if s.startswith("sanitize_") and not c["failed"]:
            continue  # one per sanitizer step: the Sanitizer section lists them
        pc = (prev or {}).get("suites", {}).get(s)
        rows.append((s, c["passed"], c["failed"], c["skipped"], pc["failed"] if pc else "-"))
        cls.append("bad" if c["failed"] else None)
    out.append(table(["suite", "passed", "failed", "skipped", "failed last night"], rows, cls,
                     numeric=(1, 2, 3, 4)))
    if n_san:
        out.append(f"<p class=small>The {n_san} sanitize_* steps are under Sanitizer (a failed "
                   "one is listed here too).</p>")
    out.append("<h2>Fuzzing</h2>")
    fz = cur.get("fuzz") or {}
    if fz:
        pf = (prev or {}).get("fuzz") or {}
        rows, cls = [], []
        for name, z in sorted(fz.items()):
            before = pf.get(name, {}).get("exec_per_s")
            rows.append((name, z["status"], z["workers"], _num(z["executions"]),
                         _num(z["exec_per_s"]), _num(before), z["cov"], z["ft"],
                         z["new_corpus_files"], len(z["reproducers"])))
            cls.append("bad" if z["status"] != "ok" or z["reproducers"] else None)
        out.append(table(["target", "status", "workers", "executions", "exec/s",
                          "exec/s last night", "cov", "ft", "new corpus files", "reproducers"],
                         rows, cls, numeric=(2, 3, 4, 5, 6, 7, 8, 9)))
    else:
        out.append("<p class=small>No fuzz target ran.</p>")
    out.append("<h2>Sanitizer</h2>")
    san = cur.get("sanitizer")
    if san:
        steps = san.get("steps", [])
        out.append(f"<p class=small>{len(steps)} steps, "
                   f"{sum(s['verdict'] == 'ok' for s in steps)} ok; tier wall "
                   f"{esc(san.get('wall_seconds'))} s.</p>")
        out.append(table(["step", "tool", "verdict", "s", "summary"],
                         [(s["step"], s["tool"], s["verdict"], _num(s.get("seconds")),
                           s.get("summary", "")) for s in steps],
                         ["bad" if s["verdict"] in ("FAILED", "TIMEOUT") else None
                          for s in steps], numeric=(3,)))
    else:
        out.append("<p class=small>The sanitizer tier did not run.</p>")
    out.append("<h2>Benchmarks</h2>")
    bench = cur.get("bench") or []
    if bench:
        slower, faster, within = compare_bench(bench, (prev or {}).get("bench"))
        judged = {r["kernel"]: ("slow", "slower") for r in slower}
        judged.update({r["kernel"]: ("fast", "faster") for r in faster})
        judged.update({r["kernel"]: (None, "within noise") for r in within})
        by = {r["kernel"]: r for r in slower + faster + within}
        rows, cls = [], []
        for r in bench:
            k = bench_key(r)
            j = by.get(k)
            rows.append((k, f"{r['median_us']:.2f}",
                         f"{j['prev_us']:.2f}" if j else "-",
                         f"{j['change']:+.1%}" if j else "-",
                         f"{j['threshold']:.1%}" if j else "-",
                         judged.get(k, (None, "new"))[1]))
            cls.append(judged.get(k, (None, ""))[0])
        out.append(table(["kernel / shape / arm", "median us", "last night us", "change",
                          "noise threshold", "verdict"], rows, cls, numeric=(1, 2, 3, 4)))
        out.append("<h2>Each kernel over the recorded nights</h2>")
        out.append("<p class=small>Median launch time (us) per night, the p10..p90 band shaded, "
                   "tonight in red. x: the nights, oldest left.</p><div class=grid>")
        for r in bench:
            k = bench_key(r)
            pts = []
            for rec in records:
                m = {bench_key(x): x for x in rec.get("bench") or []}.get(k)
                if m:
                    pts.append((f"{rec.get('recorded_at', '?')[:10]} {rec['commit'][:7]}",
                                m["median_us"], m.get("p10_us"), m.get("p90_us")))
            out.append(f"<div class=plot><div class=t title='{esc(k)}'>{esc(k)}</div>"
                       f"{plot(k, pts)}</div>")
        out.append("</div>")
    else:
        out.append("<p class=small>No benchmark results in tonight's record.</p>")
    if skipped_lines:
        out.append(f"<p class=small>{skipped_lines} older history line(s) could not be read and "
                   "are left out of the plots.</p>")
    out.append("<h2>The report in full (markdown)</h2>")
    out.append(f"<pre>{esc(md_text)}</pre></body></html>")
    return "\n".join(out) + "\n"
