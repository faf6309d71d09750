# SPDX-License-Identifier: GPL-2.0
"""The verdicts of a merged report (lclkctl --json trace merge) for the
cluster view's guest tests: usage cluster_verdict.py REPORT.json CASE
SLOW_HOST [OFFSET_NS SLACK_NS]. Prints '#' lines for the log, then one line
BENCH_CASE SHARE CERTAIN VIOLATIONS AMBIGUOUS FLAGGED MATCHED
SHARE: rounds the slow host came last; CERTAIN: of those, certain;
AMBIGUOUS: messages to or from the slow host whose order is within the
bounds; FLAGGED: pairs flagged lying, "hostA-hostB,..." or "-".
With OFFSET_NS, the slow host's clock set that far ahead of the others,
also a line OFFSET_CASE PAIRS HELD: of the PAIRS with the slow host whose
traffic went both ways, the HELD whose interval holds the offset, give or
take the pair's claimed bound and SLACK_NS (the error the slow host had
before it was set)."""
import json
import sys

report, case, slow = sys.argv[1:4]
offset = int(sys.argv[4]) if len(sys.argv) > 4 else None
r = json.load(open(report))
ranks = [x for x in r["ranks"] if x["name"].split()[0] == slow]
last = sum(x["last"] for x in ranks)
certain = sum(x["certain"] for x in ranks)
rounds = r["rounds"]
share = last / rounds if rounds else 0
certain_share = certain / last if last else 0
flagged = sorted("%s-%s" % (p["a"], p["b"]) for p in r["pairs"] if p.get("lying"))
ambiguous = sum(p[d]["ambiguous"] for p in r["pairs"] if slow in (p["a"], p["b"])
                for d in ("a_to_b", "b_to_a"))
print("# %s: %d rounds, %s last in %.3f, certain %.3f, violations %d, ambiguous orderings "
      "with it %d, lying %s, matched %d/%d" % (case, rounds, slow, share, certain_share,
                                              r["violations"], ambiguous, flagged,
                                              r["messages"]["matched"], r["messages"]["recvs"]))
for x in r["ranks"]:
    print("#   %s: last %d (certain %d, ambiguous %d), inconsistent %d, waited %.1f ms" % (
        x["name"], x["last"], x["certain"], x["ambiguous"], x["inconsistent"],
        x["wait_ns"] / 1e6))
for p in r["pairs"]:
    if "width_ns" in p:
        print("#   %s-%s: [%d, %d] ns, width %d ns, claim %s ns, lying %s" % (
            p["a"], p["b"], p["offset_lo_ns"], p["offset_hi_ns"], p["width_ns"],
            p["claimed_bound_ns"], p["lying"]))
print("BENCH_%s %f %f %d %d %s %d" % (case, share, certain_share, r["violations"], ambiguous,
                                     ",".join(flagged) or "-", r["messages"]["matched"]))
if offset is not None:
    pairs = [p for p in r["pairs"] if "width_ns" in p and slow in (p["a"], p["b"])]
    # an interval is of b's clock minus a's
    slack = [(p["claimed_bound_ns"] or 0) + int(sys.argv[5]) for p in pairs]
    held = sum(1 for p, e in zip(pairs, slack)
               if p["offset_lo_ns"] - e <= (offset if p["b"] == slow else -offset) <=
               p["offset_hi_ns"] + e)
    print("OFFSET_%s %d %d" % (case, len(pairs), held))
