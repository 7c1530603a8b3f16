package ckpt.flink;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the harness and the job's operators share.  The MiniCluster runs in this JVM and loads the
 * job's classes from the harness's class path, so static fields reach every subtask.
 */
public final class Ctl {
    private Ctl() {}

    /** Sources emit their records (a fresh run) or emit nothing (a restore, which only reports). */
    public static volatile boolean emit = true;
    /** Sources keep emitting without end (the back-pressured run for unaligned checkpoints). */
    public static volatile boolean flood = false;
    /** Subtask 0 of the finishing source returns once this is set (FLIP-147). */
    public static volatile boolean releaseFinishing = false;
    /** Subtask 0 of the union-state source returns once this is set (union state partly finished). */
    public static volatile boolean releaseUnion = false;
    /** Per record, the keyed operator sleeps this many microseconds (back-pressure). */
    public static volatile int slowMicros = 0;

    public static final AtomicLong keyedSeen = new AtomicLong();
    public static final AtomicLong ambigSeen = new AtomicLong();
    public static final AtomicLong broadcastSeen = new AtomicLong();
    public static final AtomicLong broadcastRulesSeen = new AtomicLong();

    /** What each operator subtask put in state at its last snapshot: "uid/subtask" -> contents. */
    public static final Map<String, Object> contents = new ConcurrentHashMap<>();
    /** What each operator subtask received in initializeState on a restore. */
    public static final List<Map<String, Object>> restored = new CopyOnWriteArrayList<>();

    public static void reset() {
        emit = true;
        flood = false;
        releaseFinishing = false;
        releaseUnion = false;
        slowMicros = 0;
        keyedSeen.set(0);
        ambigSeen.set(0);
        broadcastSeen.set(0);
        broadcastRulesSeen.set(0);
        contents.clear();
        restored.clear();
    }
}
