# SPDX-License-Identifier: GPL-2.0
"""The rounds by collective of a merged report (lclkctl --json trace merge
given the recorder's traces too) for the cluster view's guest tests: usage
cluster_rounds.py REPORT.json CASE SLOW_HOST. Prints a '#' line per
collective for the log, then one line
ROUNDS_CASE ROUNDS WITH_WAIT SHARE CERTAIN UNPAIRED
WITH_WAIT: collectives in which a rank waited; SHARE: of those, the share
whose straggler is on SLOW_HOST; CERTAIN: of those, certain; UNPAIRED:
recorder processes the merge found no traced process for."""
import json
import sys

report, case, slow = sys.argv[1:4]
c = json.load(open(report))["collectives"]
rounds = c["by_round"]
waited = [x for x in rounds if x["straggler"] is not None]
slow_ones = [x for x in waited if x["straggler"].split()[0] == slow]
certain = [x for x in slow_ones if x["verdict"] == "certain"]
for x in rounds:
    print("#   %s #%d %s (%d ranks): %s, %s, %d waits, %.1f ms" % (
        x["group"], x["seq"], x["op"], x["ranks"], x["straggler"], x["verdict"],
        x["waits"], x["waited_ns"] / 1e6))
share = len(slow_ones) / len(waited) if waited else 0
certain_share = len(certain) / len(slow_ones) if slow_ones else 0
print("# %s: %d collectives, %d with a wait, %s straggler of %.3f, certain %.3f, unpaired %d, "
      "late slices %d, waits in no collective %d" % (
          case, len(rounds), len(waited), slow, share, certain_share, c["unpaired"],
          c["late_slices"], c["unplaced_waits"]))
print("ROUNDS_%s %d %d %f %f %d" % (case, len(rounds), len(waited), share, certain_share,
                                    c["unpaired"]))
