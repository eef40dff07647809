#!/usr/bin/env python3
"""Checks the structure of `show stat json` and `show info json` (HAProxy
2.6's JSON forms, sluice's percentile fields appended). Usage:
check_stats_json.py STAT_JSON INFO_JSON TYPES... ; prints ok.
check_stats_json.py STAT_JSON - order: checks that p50 <= p90 <= p99."""
import json
import sys

stat = json.load(open(sys.argv[1]))
if sys.argv[3:] == ["order"]:
    # the percentiles of each histogram are ordered: p50 <= p90 <= p99
    for row in stat:
        v = {f["field"]["name"]: f["value"]["value"] for f in row}
        for k in ("queue", "connect", "response", "total"):
            p = [v.get("sluice_%s_time_%s_us" % (k, q)) for q in ("p50", "p90", "p99")]
            if row[0]["objType"] != "Listener":
                assert p[0] <= p[1] <= p[2], (row[0]["objType"], k, p)
    print("ok")
    sys.exit(0)
info = json.load(open(sys.argv[2]))
types = sys.argv[3:]
assert [r[0]["objType"] for r in stat] == types, [r[0]["objType"] for r in stat]
for row in stat:
    for f in row:
        assert set(f) == {"objType", "proxyId", "id", "field", "processNum", "tags", "value"}, f
        assert set(f["field"]) == {"pos", "name"}, f
        assert set(f["tags"]) == {"origin", "nature", "scope"}, f
        assert set(f["value"]) == {"type", "value"}, f
        assert isinstance(f["value"]["value"], str) == (f["value"]["type"] == "str"), f
    pos = [f["field"]["pos"] for f in row]
    assert pos == sorted(pos) and len(set(pos)) == len(pos), pos
    names = [f["field"]["name"] for f in row]
    if row[0]["objType"] != "Listener":
        assert names[-12] == "sluice_queue_time_p50_us" and names[-1] == "sluice_total_time_p99_us", names
for f in info:
    assert set(f) == {"field", "processNum", "tags", "value"}, f
assert info[0]["field"] == {"pos": 0, "name": "Name"}, info[0]
print("ok")
