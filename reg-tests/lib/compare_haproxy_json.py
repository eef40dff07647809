#!/usr/bin/env python3
"""Compares the layout of sluice's `show stat json` / `show info json` with
what HAProxy 2.6 printed for the same configuration (fixtures in
reg-tests/stats/haproxy-2.6/): the same rows in the same order, and in each
row the same fields (position, name, tags, value type, object keys) up to
HAProxy's core columns (positions 0..102); HAProxy's module columns
(103..126) are absent from sluice's and nothing of sluice's uses their
positions. Info: every HAProxy field at its position with its tags and type.
Usage: compare_haproxy_json.py HA_STAT HA_INFO SL_STAT SL_INFO; prints ok
or the differences."""
import json
import sys

def fields(row, lo, hi):
    return [(f["objType"], f["field"]["pos"], f["field"]["name"], f["processNum"],
             tuple(sorted(f["tags"].items())), f["value"]["type"], tuple(f))
            for f in row if lo <= f["field"]["pos"] < hi]

ha_stat, ha_info, sl_stat, sl_info = (json.load(open(p)) for p in sys.argv[1:5])
bad = []
def rowname(r):
    n = {f["field"]["name"]: f["value"]["value"] for f in r}
    return "%s %s/%s" % (r[0]["objType"], n.get("pxname"), n.get("svname"))
if [rowname(r) for r in ha_stat] != [rowname(r) for r in sl_stat]:
    bad.append("rows: haproxy %s, sluice %s" % ([rowname(r) for r in ha_stat],
                                                 [rowname(r) for r in sl_stat]))
for h, s in zip(ha_stat, sl_stat):
    fh, fs = fields(h, 0, 103), fields(s, 0, 103)
    if fh != fs:
        for x in sorted(set(fh) ^ set(fs), key=lambda t: t[1]):
            bad.append("%s: %s only in %s" % (rowname(h), x[:6], "haproxy" if x in fh else "sluice"))
    if fields(s, 103, 127):
        bad.append("%s: sluice uses HAProxy's module positions: %s" % (rowname(s), fields(s, 103, 127)))
    for f in s:
        if isinstance(f["value"]["value"], str) != (f["value"]["type"] == "str"):
            bad.append("%s: value of %s is not of type %s" % (rowname(s), f["field"]["name"], f["value"]["type"]))
ih = {f["field"]["pos"]: f for f in ha_info}
isl = {f["field"]["pos"]: f for f in sl_info}
for pos, f in sorted(ih.items()):
    g = isl.get(pos)
    if not g:
        bad.append("info %d %s missing" % (pos, f["field"]["name"]))
    elif (f["field"], f["tags"], f["value"]["type"], sorted(f)) != (g["field"], g["tags"], g["value"]["type"], sorted(g)):
        bad.append("info %d: haproxy %s, sluice %s" % (pos, f, g))
print("\n".join(bad) if bad else "ok")
