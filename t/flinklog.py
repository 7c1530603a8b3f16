#!/usr/bin/env python3
"""flinklog.py: a test-only writer of Flink's job event log (FileSystemJobEventStore) for the tests.

    python3 t/flinklog.py DIR [SEGMENT-SIZE] < events.ndjson

reads ckpt-events(5) NDJSON events (vertex ids: JobVertexIDs, 32 hex digits) and writes them to
DIR/events.0, events.1, ... as Flink 2.3 writes them: a big-endian int type, an int length, the
payload, Java serialization streams with the class descriptors of Flink's classes (names,
serialVersionUIDs, fields as java.io.ObjectStreamClass orders them).  A new segment starts
after SEGMENT-SIZE records (default: all in events.0).  What Flink fills in and ckpt does not
read (TaskManagerLocation, accumulators) is written null.  A shuffle snapshot other than
{"incremental": false, "state": ""} (Flink's EmptyShuffleMasterSnapshot) is written as an
object of the class org.example.TestShuffleMasterSnapshot, which no reader knows.
"""
import base64
import json
import os
import struct
import sys

EV = "org.apache.flink.runtime.jobmaster.event."
# name: (serialVersionUID, flags, [(type, name, signature)], superclass)
CLASSES = {
    EV + "ExecutionJobVertexInitializedEvent": (0x7f11942489c196d2, 2, [
        ("I", "parallelism", None), ("L", "jobVertexId", "Lorg/apache/flink/runtime/jobgraph/JobVertexID;"),
        ("L", "jobVertexInputInfos", "Ljava/util/Map;")], None),
    EV + "ExecutionVertexFinishedEvent": (0x360b2e7cff867c9a, 2, [
        ("L", "executionAttemptId", "Lorg/apache/flink/runtime/executiongraph/ExecutionAttemptID;"),
        ("L", "ioMetrics", "Lorg/apache/flink/runtime/executiongraph/IOMetrics;"),
        ("L", "taskManagerLocation", "Lorg/apache/flink/runtime/taskmanager/TaskManagerLocation;"),
        ("L", "userAccumulators", "Ljava/util/Map;")], None),
    EV + "ExecutionVertexResetEvent": (-2038315817411193355, 2, [
        ("L", "executionVertexIds", "Ljava/util/List;")], None),
    "org.apache.flink.util.AbstractID": (1, 2, [("J", "lowerPart", None), ("J", "upperPart", None)], None),
    "org.apache.flink.runtime.jobgraph.JobVertexID": (1, 2, [], "org.apache.flink.util.AbstractID"),
    "org.apache.flink.runtime.jobgraph.OperatorID": (1, 2, [], "org.apache.flink.util.AbstractID"),
    "org.apache.flink.runtime.executiongraph.ExecutionGraphID": (1, 2, [], "org.apache.flink.util.AbstractID"),
    "org.apache.flink.runtime.executiongraph.ExecutionAttemptID": (1, 2, [
        ("I", "attemptNumber", None),
        ("L", "executionGraphId", "Lorg/apache/flink/runtime/executiongraph/ExecutionGraphID;"),
        ("L", "executionVertexId", "Lorg/apache/flink/runtime/scheduler/strategy/ExecutionVertexID;")], None),
    "org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID": (1, 2, [
        ("I", "subtaskIndex", None), ("L", "jobVertexId", "Lorg/apache/flink/runtime/jobgraph/JobVertexID;")], None),
    "org.apache.flink.runtime.executiongraph.IOMetrics": (-0x6408_4af2_2a2a_a2df, 2, [
        ("J", "accumulateBackPressuredTime", None), ("D", "accumulateBusyTime", None),
        ("J", "accumulateIdleTime", None), ("J", "numBytesIn", None), ("J", "numBytesOut", None),
        ("J", "numRecordsIn", None), ("J", "numRecordsOut", None),
        ("L", "resultPartitionBytes", "Ljava/util/Map;")], None),
    "java.util.HashMap": (0x0507dac1c31660d1, 3, [("F", "loadFactor", None), ("I", "threshold", None)], None),
    "java.util.LinkedHashMap": (0x34c04e5c106cc0fb, 2, [("Z", "accessOrder", None)], "java.util.HashMap"),
    "java.util.ArrayList": (0x7881d21d99c7619d, 3, [("I", "size", None)], None),
    "[B": (-0x530ce807f9f7ab20, 2, [], None),
    "org.apache.flink.runtime.shuffle.EmptyShuffleMasterSnapshot": (-0x7f4f5e4b74bd9c10, 2, [], None),
    "org.example.TestShuffleMasterSnapshot": (1, 2, [("Z", "incremental", None)], None),
}
BASE_HANDLE = 0x7E0000


class Stream:
    """java.io.ObjectOutputStream, for the objects above."""

    def __init__(self):
        self.b = bytearray(b"\xac\xed\x00\x05")
        self.handles = {}

    def assign(self, key):
        h = BASE_HANDLE + len(self.handles) if key is not None else None
        self.handles[key if key is not None else object()] = BASE_HANDLE + len(self.handles)
        return h

    def back(self, key):
        if key in self.handles:
            self.b += b"\x71" + struct.pack(">i", self.handles[key])
            return True
        return False

    def utf(self, s):
        e = s.encode()
        self.b += struct.pack(">H", len(e)) + e

    def string(self, s):
        if not self.back(("s", s)):
            self.b += b"\x74"
            self.assign(("s", s))
            self.utf(s)

    def classdesc(self, name):
        if name is None:
            self.b += b"\x70"
            return
        if self.back(("c", name)):
            return
        suid, flags, fields, sup = CLASSES[name]
        self.b += b"\x72"
        self.utf(name)
        self.b += struct.pack(">q", suid)
        self.assign(("c", name))
        self.b += struct.pack(">BH", flags, len(fields))
        for t, n, sig in fields:
            self.b += t.encode()
            self.utf(n)
            if sig:
                self.string(sig)
        self.b += b"\x78"
        self.classdesc(sup)

    def hierarchy(self, name):
        chain = []
        while name:
            chain.insert(0, name)
            name = CLASSES[name][3]
        return chain

    def prim(self, t, v):
        self.b += struct.pack({"I": ">i", "J": ">q", "F": ">f", "D": ">d", "Z": ">?"}[t], v)

    def value(self, v):
        """None, a str, bytes (a byte[]), or (class, {field: value}, {class: [extras]})."""
        if v is None:
            self.b += b"\x70"
        elif isinstance(v, str):
            self.string(v)
        elif isinstance(v, bytes):
            self.b += b"\x75"
            self.classdesc("[B")
            self.assign(None)
            self.b += struct.pack(">i", len(v)) + v
        else:
            cls, fields, extras = v
            self.b += b"\x73"
            self.classdesc(cls)
            self.assign(None)
            for c in self.hierarchy(cls):
                for t, n, _ in CLASSES[c][2]:
                    if t in "L[":
                        self.value(fields[n])
                    else:
                        self.prim(t, fields[n])
                if CLASSES[c][1] & 1:
                    for x in extras.get(c, []):
                        if isinstance(x, tuple) and x[0] == "block":
                            self.b += b"\x77" + struct.pack(">B", len(x[1])) + x[1]
                        else:
                            self.value(x)
                    self.b += b"\x78"


def hashmap(entries, linked=False):
    items = []
    for k, v in entries:
        items += [k, v]
    f = {"loadFactor": 0.75, "threshold": 12 if entries else 0, "accessOrder": False}
    return ("java.util.LinkedHashMap" if linked else "java.util.HashMap", f,
            {"java.util.HashMap": [("block", struct.pack(">ii", 16, len(entries)))] + items})


def arraylist(items):
    return ("java.util.ArrayList", {"size": len(items)},
            {"java.util.ArrayList": [("block", struct.pack(">i", len(items)))] + items})


def abstract_id(cls, hexid):
    if len(hexid) != 32:
        sys.exit("flinklog.py: %r is not a JobVertexID (32 hex digits)" % hexid)
    lo, hi = struct.unpack(">qq", bytes.fromhex(hexid))
    return (cls, {"lowerPart": lo, "upperPart": hi}, {})


def vertex_id(v, sub):
    return ("org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID",
            {"subtaskIndex": sub, "jobVertexId": abstract_id("org.apache.flink.runtime.jobgraph.JobVertexID", v)}, {})


def serialize(v):
    s = Stream()
    s.value(v)
    return bytes(s.b)


def entry(e):
    return base64.b64decode(e["base64"]) if isinstance(e, dict) else e.encode()


def finished(p):
    m = p.get("metrics") or {}
    io = ("org.apache.flink.runtime.executiongraph.IOMetrics", {
        "accumulateBackPressuredTime": m.get("back_pressured_ms", 0), "accumulateBusyTime": float(m.get("busy_ms", 0)),
        "accumulateIdleTime": m.get("idle_ms", 0), "numBytesIn": m.get("bytes_in", 0),
        "numBytesOut": m.get("bytes_out", 0), "numRecordsIn": m.get("records_in", 0),
        "numRecordsOut": m.get("records_out", 0), "resultPartitionBytes": None}, {})
    att = ("org.apache.flink.runtime.executiongraph.ExecutionAttemptID", {
        "attemptNumber": p["attempt"],
        "executionGraphId": abstract_id("org.apache.flink.runtime.executiongraph.ExecutionGraphID", "00" * 16),
        "executionVertexId": vertex_id(p["vertex"], p["subtask"])}, {})
    ev = serialize((EV + "ExecutionVertexFinishedEvent", {"executionAttemptId": att, "ioMetrics": io,
                    "taskManagerLocation": None, "userAccumulators": None}, {}))
    snaps = p.get("snapshots")
    coords = snaps["coordinators"] if snaps else {}
    co = serialize(hashmap([(abstract_id("org.apache.flink.runtime.jobgraph.OperatorID", op), entry(st))
                            for op, st in coords.items()]))
    out = struct.pack(">i", len(ev)) + ev + struct.pack(">i", len(co)) + co
    if not snaps:
        return out + struct.pack(">i", 0)
    sh = snaps["shuffle"]
    if sh == {"incremental": False, "state": ""}:
        shb = serialize(("org.apache.flink.runtime.shuffle.EmptyShuffleMasterSnapshot", {}, {}))
    else:
        shb = serialize(("org.example.TestShuffleMasterSnapshot", {"incremental": bool(sh and sh["incremental"])}, {}))
    return out + struct.pack(">i", len(shb)) + shb


def record(line):
    ev = json.loads(line)
    t, p = ev["type"], ev["payload"]
    t = {"vertex_finished": 1, "vertices_reset": 2, "vertex_initialized": 3}.get(t, t)
    if t == 1:
        body = finished(p)
    elif t == 2:
        body = serialize((EV + "ExecutionVertexResetEvent", {"executionVertexIds": arraylist(
            [vertex_id(s["vertex"], s["subtask"]) for s in p["subtasks"]])}, {}))
    else:
        body = serialize((EV + "ExecutionJobVertexInitializedEvent", {
            "parallelism": p["parallelism"],
            "jobVertexId": abstract_id("org.apache.flink.runtime.jobgraph.JobVertexID", p["vertex"]),
            "jobVertexInputInfos": hashmap([], linked=True)}, {}))
    return struct.pack(">ii", t, len(body)) + body


def main():
    out = sys.argv[1]
    per = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    os.makedirs(out, exist_ok=True)
    recs = [record(l) for l in sys.stdin if l.strip()]
    segs = [recs[i:i + per] for i in range(0, len(recs), per)] if per else [recs]
    for i, seg in enumerate(segs or [[]]):
        with open(os.path.join(out, "events.%d" % i), "wb") as f:
            f.write(b"".join(seg))


main()
