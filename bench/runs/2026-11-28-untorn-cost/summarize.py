#!/usr/bin/env python3
"""Prints the untorn section of each probe document given: the cost per page
size (ratio untorn / plain per round: median, min-max, rounds; both sides'
medians and runs) and the answers' short forms."""
import json
import sys


def short(a):
    if a["untorn"]:
        return f"yes ({a['path']} path)" if a["path"] else "yes"
    return f"no ({a['limit']})" if a["limit"] else "no"


for path in sys.argv[1:]:
    v = json.load(open(path))
    u = v["untorn"]
    busy = v["machine"]["busy"]
    print(f"{path}: {v['level']}, {v['elapsed_ms'] / 1e3:.1f} s (budget {v['budget_seconds']:.0f} s), "
          f"machine {'busy: ' + '; '.join(v['machine']['reasons']) if busy else 'idle'}")
    print(f"  statx: {u['facts']['limits']}, source {u['facts']['source']}, hardware_max {u['facts']['hardware_max']}")
    for c in u["cost"]:
        if not c["measured"]:
            print(f"  {c['page_size'] // 1024} KiB: {c['text']}")
            continue
        runs = lambda w: ", ".join(f"{x:.0f}" for x in w["runs"])
        print(f"  {c['page_size'] // 1024} KiB {c['path']}: ratio {c['ratio']:.2f}x "
              f"({c['ratio_min']:.2f}-{c['ratio_max']:.2f}x, {len(c['ratios'])} rounds, "
              f"up to {c['seconds_per_run']:.2f} s per side), p = {c['p_value']:.3f}; "
              f"plain {c['plain']['writes_per_sec']:.0f}/s [{runs(c['plain'])}] "
              f"p50 {c['plain']['p50_us']:.0f} us, "
              f"untorn {c['untorn']['writes_per_sec']:.0f}/s [{runs(c['untorn'])}] "
              f"p50 {c['untorn']['p50_us']:.0f} us")
    print("  answers: " + "; ".join(f"{a['page_size'] // 1024} KiB {a['io']}: {short(a)}" for a in u["answers"]))
    for e in v.get("engines", []):
        for s in e["settings"]:
            if s["kind"] == "keep-for-safety" and s["name"] in ("full_page_writes", "innodb_doublewrite"):
                print(f"  {e['engine']} {s['name']} = {s['value']}: {s['reason']}")
