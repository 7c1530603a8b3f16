#!/usr/bin/env python3
# A state document whose entries, keys, values and channel state have every size at and around
# each power of two, 0 to 2^K + 1 (K from the command line, default 22): one subtask per size,
# each holding its bytes alone in the state file: up to 2^17 + 1 a list entry, a keyed value and
# input and output channel state of that size; above, one of the four in turn (the document stays
# small enough to be fast); and one subtask holding every size up to 2^17 + 1 one after the other,
# as list entries, keys, values and channel state.  Bytes differ from entry to entry, so that
# bytes out of place change the document.
import json, sys

K = int(sys.argv[1]) if len(sys.argv) > 1 else 22
sizes = sorted({0, 1, 2} | {s for k in range(1, K + 1) for s in (2**k - 1, 2**k, 2**k + 1)})

def data(n, seed):
    pat = ("%d/%d:" % (seed, n)) + "abcdefghijklmnopqrstuvwxyz0123456789"
    return (pat * (n // len(pat) + 1))[:n]

subs = []
for i, n in enumerate(sizes):
    every = n <= 2**17 + 1
    def size(kind):
        return n if every or i % 4 == kind else 1
    subs.append({"index": i,
                 "operator_state": {"l": {"mode": "list", "entries": [data(size(0), 1)]}},
                 "keyed_state": {"key_groups": "%d" % i,
                                 "entries": [{"state": "v", "key_group": i, "key": "k%d" % i,
                                              "value": data(size(1), 2)}]},
                 "channel_state": {"input": [{"gate": 0, "channel": 0, "data": data(size(2), 3)}],
                                   "output": [{"partition": 0, "subpartition": 0, "data": data(size(3), 4)}]}})
small = [n for n in sizes if n <= 2**17 + 1]
subs.append({"index": len(sizes),
             "operator_state": {"l": {"mode": "list", "entries": [data(n, 5) for n in small]}},
             "keyed_state": {"key_groups": "%d" % len(sizes),
                             "entries": [{"state": "v", "key_group": len(sizes), "key": data(n, 6),
                                          "value": data(n, 7)} for n in small]},
             "channel_state": {"input": [{"gate": 0, "channel": c, "data": data(n, 8)} for c, n in enumerate(small)],
                               "output": []}})
doc = {"format": "ckpt-state", "version": 1, "checkpoint_id": 1, "kind": "checkpoint",
       "operators": [{"id": "sizes", "parallelism": len(subs), "max_parallelism": 128, "subtasks": subs}]}
json.dump(doc, sys.stdout)
