package ckpt.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.BroadcastStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.co.BroadcastProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.InternalTimerService;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Triggerable;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.Collector;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The streaming job whose checkpoints and savepoints the harness writes.  Every operator puts known
 * contents into its state and records them in {@link Ctl#contents}; on a restore every operator
 * reports what its initializeState received into {@link Ctl#restored}.
 *
 * <pre>
 *  src-union (union list state, p 2) ──rebalance──┐
 *  src-finishing (list state, p 3; subtask 0 ends) ─┤
 *  src-done (list state, p 2; both subtasks end) ───┴─> map-list (list state) -> [filter, no uid]
 *      -> map-tag   (one chain, p 3) ──hash──> keyed (value, list, map, reducing state, timers; p 2)
 *      ──forward──> broadcast (broadcast state "rules" fed by rules-filter from src-union; p 2)
 *      ──> sink (p 1)
 *   map-tag ──hash──> ambig (String key, value and map state in String namespaces; p as keyed; no output)
 * </pre>
 */
public final class StateJob {
    private StateJob() {}

    public static final int MAX_PARALLELISM = 32;
    /** Changed by the harness for the restores Flink refuses: the max parallelism. */
    static volatile int maxParallelism = MAX_PARALLELISM;
    /**
     * The job variant of a restore: an operator carrying another uid (uid -> new uid; the missing-uid
     * restores, the re-uided savepoints of edit.bats) and operators left out of the job (only
     * "broadcast": keyed then feeds the sink; the dropped savepoints).
     */
    static final Map<String, String> newUids = new java.util.concurrent.ConcurrentHashMap<>();
    static final java.util.Set<String> without = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static String uid(String uid) {
        return newUids.getOrDefault(uid, uid);
    }
    public static final int UNION_RECORDS = 50;
    public static final int FINISHING_RECORDS = 30;
    public static final int RULES_PER_SUBTASK = 3;
    public static final int DONE_RECORDS = 10;

    /** The uids and default parallelisms; the filter has no uid. */
    public static final String[] UIDS = {"src-union", "src-finishing", "map-list", "map-tag", "keyed", "ambig", "broadcast", "rules-filter", "sink"};

    public static Map<String, Integer> defaultParallelism() {
        Map<String, Integer> p = new TreeMap<>();
        p.put("src-union", 2);
        p.put("src-finishing", 3);
        p.put("src-done", 2);
        p.put("chain", 3);
        p.put("keyed", 2);
        p.put("broadcast", 2);
        p.put("sink", 1);
        return p;
    }

    /** Records the job puts through, once every source has emitted and nothing floods. */
    public static long expectedRecords(Map<String, Integer> p) {
        return (long) p.get("src-union") * UNION_RECORDS + (long) p.get("src-finishing") * FINISHING_RECORDS
                + (long) p.get("src-done") * DONE_RECORDS;
    }

    public static final MapStateDescriptor<String, Long> RULES =
            new MapStateDescriptor<>("rules", Types.STRING, Types.LONG);

    public static void build(StreamExecutionEnvironment env, Map<String, Integer> p) {
        env.setMaxParallelism(maxParallelism);
        DataStream<Long> union = env.addSource(new UnionSource(), "src-union", Types.LONG)
                .uid(uid("src-union")).setParallelism(p.get("src-union"));
        DataStream<Long> finishing = env.addSource(new FinishingSource(), "src-finishing", Types.LONG)
                .uid(uid("src-finishing")).setParallelism(p.get("src-finishing"));
        DataStream<Long> done = env.addSource(new DoneSource(), "src-done", Types.LONG)
                .uid(uid("src-done")).setParallelism(p.get("src-done"));
        int chain = p.get("chain");
        DataStream<Long> tagged = union.rebalance().union(finishing, done.rebalance())
                .map(new ListMap()).name("map-list").uid(uid("map-list")).setParallelism(chain)
                .filter(v -> v >= 0).name("no-uid-filter").setParallelism(chain)
                .map(v -> v).returns(Types.LONG).name("map-tag").uid(uid("map-tag")).setParallelism(chain);
        DataStream<Long> keyed = tagged.keyBy(new ModKey())
                .transform("keyed", Types.LONG, new KeyedOp()).uid(uid("keyed")).setParallelism(p.get("keyed"));
        tagged.keyBy(new AmbigKey()).transform("ambig", Types.LONG, new AmbigOp()).uid(uid("ambig"))
                .setParallelism(p.get("keyed"));
        BroadcastStream<Long> rules = union.filter(v -> v % 1000 < RULES_PER_SUBTASK)
                .name("rules-filter").uid(uid("rules-filter")).setParallelism(p.get("src-union"))
                .broadcast(RULES);
        DataStream<Long> last = without.contains("broadcast") ? keyed
                : keyed.connect(rules).process(new Broadcast()).returns(Types.LONG)
                        .name("broadcast").uid(uid("broadcast")).setParallelism(p.get("broadcast"));
        last.sinkTo(new DiscardingSink<>()).name("sink").uid(uid("sink")).setParallelism(p.get("sink"));
    }

    static Map<String, Object> report(String uid, int subtask, int parallelism) {
        Map<String, Object> r = Json.obj("uid", uid, "subtask", subtask, "parallelism", parallelism);
        Ctl.restored.add(r);
        return r;
    }

    static <T> List<T> all(Iterable<T> it) {
        List<T> l = new ArrayList<>();
        if (it != null) for (T x : it) l.add(x);
        return l;
    }

    static void idle(LegacySource<?> s) throws InterruptedException {
        while (true) {
            if (!((Cancellable) s).running()) return;
            Thread.sleep(20);
        }
    }

    interface Cancellable {
        boolean running();
    }

    /**
     * A legacy source of the job keeping one operator list state, NAME, of Strings (split or union
     * redistribution): what each snapshot puts there (elements()) goes into Ctl.contents as
     * "UID/SUBTASK", and, if it reports, a restored subtask reports the elements it got.
     */
    abstract static class ListStateSource extends LegacySource<Long> implements CheckpointedFunction, Cancellable {
        private final String uid;
        private final String name;
        private final boolean union;
        private final boolean reports;
        protected volatile boolean running = true;
        private transient ListState<String> state;
        protected long emitted;
        protected int idx;

        ListStateSource(String uid, String name, boolean union, boolean reports) {
            this.uid = uid;
            this.name = name;
            this.union = union;
            this.reports = reports;
        }

        public boolean running() {
            return running;
        }

        /** The elements a snapshot puts in the state. */
        abstract List<String> elements();

        @Override
        public void initializeState(FunctionInitializationContext ctx) throws Exception {
            idx = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            ListStateDescriptor<String> d = new ListStateDescriptor<>(name, Types.STRING);
            state = union ? ctx.getOperatorStateStore().getUnionListState(d) : ctx.getOperatorStateStore().getListState(d);
            if (reports && ctx.isRestored()) {
                report(uid, idx, getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks())
                        .put(union ? "union" : "list", Json.obj(name, all(state.get())));
            }
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            List<String> l = elements();
            state.update(l);
            Ctl.contents.put(uid + "/" + idx, Json.obj(name, l));
        }

        /**
         * The records base + k for k below count, then while Ctl.flood base + flood + k % 997 (k from
         * count on) until cancelled, each under the checkpoint lock and counted in emitted.
         */
        void emit(Out<Long> out, long base, int count, long flood) throws Exception {
            for (int k = 0; k < count && running; k++) {
                synchronized (out.lock()) {
                    out.emit(base + k);
                    emitted++;
                }
            }
            for (long k = count; Ctl.flood && running; k++) {
                synchronized (out.lock()) {
                    out.emit(base + flood + (k % 997));
                    emitted++;
                }
                // a legacy source holds the checkpoint lock while it waits for a buffer: let the
                // checkpoint in often (every 50 records starved it on a loaded machine)
                if (k % 10 == 0) Thread.sleep(1);
            }
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    /** A source with union list state "union-offsets": two elements per subtask. */
    public static final class UnionSource extends ListStateSource {
        UnionSource() {
            super("src-union", "union-offsets", true, true);
        }

        @Override
        List<String> elements() {
            return List.of("u" + idx + ":" + emitted, "u" + idx + ":meta");
        }

        @Override
        protected void produce(Out<Long> out) throws Exception {
            if (Ctl.emit) emit(out, (long) idx * 1000, UNION_RECORDS, RULES_PER_SUBTASK);
            while (running) {
                // subtask 0 finishes when told, its union state still in the others (FLIP-147)
                if (idx == 0 && Ctl.emit && Ctl.releaseUnion) return;
                Thread.sleep(20);
            }
        }
    }

    /** A source with list state "positions" (1, 2, 3 elements); its subtask 0 finishes when told. */
    public static final class FinishingSource extends ListStateSource {
        FinishingSource() {
            super("src-finishing", "positions", false, true);
        }

        @Override
        List<String> elements() {
            List<String> l = new ArrayList<>();
            l.add("f" + idx + ":" + emitted);
            for (int j = 0; j < idx; j++) l.add("f" + idx + ":x" + j);
            return l;
        }

        @Override
        protected void produce(Out<Long> out) throws Exception {
            if (Ctl.emit) {
                emit(out, 100000L + idx * 1000L, FINISHING_RECORDS, 0);
                if (idx == 0) {
                    while (running && !Ctl.releaseFinishing) Thread.sleep(10);
                    return;
                }
            }
            idle(this);
        }
    }

    /** A source with list state "done" whose subtasks all finish when told: fully finished (FLIP-147). */
    public static final class DoneSource extends ListStateSource {
        DoneSource() {
            super("src-done", "done", false, false);
        }

        @Override
        List<String> elements() {
            return List.of("d" + idx);
        }

        @Override
        protected void produce(Out<Long> out) throws Exception {
            if (Ctl.emit) {
                for (int k = 0; k < DONE_RECORDS && running; k++) out.emit(200000L + idx * 1000L + k);
                while (running && !Ctl.releaseFinishing) Thread.sleep(10);
                return;
            }
            idle(this);
        }
    }

    /** Head of the chain: operator list state "buffer" with idx + 2 elements. */
    public static final class ListMap extends RichMapFunction<Long, Long> implements CheckpointedFunction {
        private transient ListState<String> state;
        private int idx;

        @Override
        public void open(OpenContext ctx) {}

        @Override
        public Long map(Long v) {
            return v;
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) throws Exception {
            idx = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            state = ctx.getOperatorStateStore().getListState(new ListStateDescriptor<>("buffer", Types.STRING));
            if (ctx.isRestored()) {
                report("map-list", idx, getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks())
                        .put("list", Json.obj("buffer", all(state.get())));
            }
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            List<String> l = new ArrayList<>();
            for (int j = 0; j < idx + 2; j++) l.add("m" + idx + ":" + j);
            state.update(l);
            Ctl.contents.put("map-list/" + idx, Json.obj("buffer", l));
        }
    }

    public static final class ModKey implements KeySelector<Long, Long> {
        @Override
        public Long getKey(Long v) {
            return v % 10;
        }
    }

    /**
     * The keyed operator: value state "count", list state "multiples-of-3", map state "by-source",
     * reducing state "sum", and per key an event-time and a processing-time timer that never fire.
     */
    public static final class KeyedOp extends AbstractStreamOperator<Long>
            implements OneInputStreamOperator<Long, Long>, Triggerable<Long, VoidNamespace> {
        private transient ValueState<Long> count;
        private transient ListState<Long> multiples;
        private transient MapState<String, Long> bySource;
        private transient ReducingState<Long> sum;
        private transient InternalTimerService<VoidNamespace> timers;
        private transient Map<Long, Map<String, Object>> mirror;
        private int idx;

        private void states() throws Exception {
            count = getPartitionedState(new ValueStateDescriptor<>("count", Types.LONG));
            multiples = getPartitionedState(new ListStateDescriptor<>("multiples-of-3", Types.LONG));
            bySource = getPartitionedState(new MapStateDescriptor<>("by-source", Types.STRING, Types.LONG));
            sum = getPartitionedState(new ReducingStateDescriptor<>("sum", Long::sum, Types.LONG));
        }

        @Override
        @SuppressWarnings("unchecked")
        public void initializeState(StateInitializationContext ctx) throws Exception {
            super.initializeState(ctx);
            idx = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            mirror = new TreeMap<>();
            states();
            if (!ctx.isRestored()) return;
            Map<String, Object> r = report("keyed", idx, getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks());
            KeyGroupRange range = ((CheckpointableKeyedStateBackend<Long>) (Object) getKeyedStateBackend()).getKeyGroupRange();
            r.put("key_groups", List.of(range.getStartKeyGroup(), range.getEndKeyGroup()));
            Map<String, Object> keys = new TreeMap<>();
            List<Long> ks = new ArrayList<>();
            getKeyedStateBackend().getKeys("count", VoidNamespace.INSTANCE).forEach(k -> ks.add((Long) k));
            for (Long k : ks) {
                setCurrentKey(k);
                keys.put(String.valueOf(k), Json.obj("key_group", KeyGroupRangeAssignment.assignToKeyGroup(k, maxParallelism),
                        "count", count.value(), "sum", sum.get()));
            }
            r.put("keys", keys);
        }

        @Override
        public void open() throws Exception {
            super.open();
            timers = getInternalTimerService("user-timers", VoidNamespaceSerializer.INSTANCE, this);
        }

        @Override
        public void processElement(StreamRecord<Long> rec) throws Exception {
            long v = rec.getValue();
            long key = v % 10;
            Long c = count.value();
            count.update(c == null ? 1 : c + 1);
            if (v % 3 == 0) multiples.add(v);
            String src = v >= 200000 ? "done" : v >= 100000 ? "finishing" : "union";
            Long s = bySource.get(src);
            bySource.put(src, s == null ? 1 : s + 1);
            sum.add(v);
            timers.registerEventTimeTimer(VoidNamespace.INSTANCE, 1_000_000_000L + key);
            timers.registerProcessingTimeTimer(VoidNamespace.INSTANCE, Long.MAX_VALUE / 2 + key);
            List<Long> ml = all(multiples.get());
            ml.sort(null);
            Map<String, Object> bs = new TreeMap<>();
            for (Map.Entry<String, Long> e : bySource.entries()) bs.put(e.getKey(), e.getValue());
            mirror.put(key, Json.obj("key_group", KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism),
                    "count", count.value(), "multiples-of-3", ml, "by-source", bs, "sum", sum.get(),
                    "event_timer", String.valueOf(1_000_000_000L + key),
                    "processing_timer", String.valueOf(Long.MAX_VALUE / 2 + key)));
            int us = Ctl.slowMicros;
            if (us > 0) Thread.sleep(us / 1000, (us % 1000) * 1000);
            Ctl.keyedSeen.incrementAndGet();
            output.collect(rec);
        }

        @Override
        public void snapshotState(StateSnapshotContext ctx) throws Exception {
            super.snapshotState(ctx);
            Map<String, Object> keys = new TreeMap<>();
            for (Map.Entry<Long, Map<String, Object>> e : mirror.entrySet()) keys.put(String.valueOf(e.getKey()), e.getValue());
            Ctl.contents.put("keyed/" + idx, Json.obj("keys", keys));
        }

        @Override
        public void onEventTime(InternalTimer<Long, VoidNamespace> timer) {}

        @Override
        public void onProcessingTime(InternalTimer<Long, VoidNamespace> timer) {}
    }

    /** Keys of three lengths: "a", "ax", "axx" (key groups 17, 22, 8: on each subtask at p 2 and 3). */
    public static final class AmbigKey implements KeySelector<Long, String> {
        @Override
        public String getKey(Long v) {
            return "a" + "x".repeat((int) (v % 3));
        }
    }

    /** The namespace of a record: its source; "done" one of 300 characters (a two-byte length). */
    static String source(long v) {
        return v >= 200000 ? "done:" + "d".repeat(295) : v >= 100000 ? "finishing" : "union";
    }

    /**
     * Key and namespace both of variable length (Strings), Flink's "ambiguous key": RocksDB and the
     * canonical savepoints write each with a length suffix (CompositeKeySerializationUtils).  Per
     * key and namespace (the record's source) value state "visits" (records) and map state "parity"
     * ("even"/"odd" -> records).  It reports nothing on a restore.
     */
    public static final class AmbigOp extends AbstractStreamOperator<Long> implements OneInputStreamOperator<Long, Long> {
        private static final ValueStateDescriptor<Long> VISITS = new ValueStateDescriptor<>("visits", Types.LONG);
        private static final MapStateDescriptor<String, Long> PARITY =
                new MapStateDescriptor<>("parity", Types.STRING, Types.LONG);
        private transient Map<String, Map<String, Object>> mirror;
        private int idx;

        @Override
        public void initializeState(StateInitializationContext ctx) throws Exception {
            super.initializeState(ctx);
            idx = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            mirror = new TreeMap<>();
        }

        @Override
        @SuppressWarnings("unchecked")
        public void processElement(StreamRecord<Long> rec) throws Exception {
            long v = rec.getValue();
            String key = (String) getCurrentKey(), ns = source(v), par = v % 2 == 0 ? "even" : "odd";
            ValueState<Long> visits = getPartitionedState(ns, StringSerializer.INSTANCE, VISITS);
            Long c = visits.value();
            visits.update(c == null ? 1 : c + 1);
            MapState<String, Long> parity = getPartitionedState(ns, StringSerializer.INSTANCE, PARITY);
            Long q = parity.get(par);
            parity.put(par, q == null ? 1 : q + 1);
            Map<String, Object> m = mirror.computeIfAbsent(key, k -> Json.obj("key_group",
                    KeyGroupRangeAssignment.assignToKeyGroup(k, maxParallelism), "visits", new TreeMap<String, Object>(),
                    "parity", new TreeMap<String, Object>()));
            ((Map<String, Object>) m.get("visits")).put(ns, visits.value());
            ((Map<String, Object>) ((Map<String, Object>) m.get("parity")).computeIfAbsent(ns, k -> new TreeMap<String, Object>()))
                    .put(par, parity.get(par));
            Ctl.ambigSeen.incrementAndGet();
        }

        @Override
        public void snapshotState(StateSnapshotContext ctx) throws Exception {
            super.snapshotState(ctx);
            Map<String, Object> keys = new TreeMap<>();
            // a copy: the mirror changes with the records after this snapshot
            for (Map.Entry<String, Map<String, Object>> e : mirror.entrySet()) keys.put(e.getKey(), copy(e.getValue()));
            Ctl.contents.put("ambig/" + idx, Json.obj("keys", keys));
        }

        @SuppressWarnings("unchecked")
        private static Map<String, Object> copy(Map<String, Object> m) {
            Map<String, Object> c = new TreeMap<>();
            for (Map.Entry<String, Object> e : m.entrySet())
                c.put(e.getKey(), e.getValue() instanceof Map ? copy((Map<String, Object>) e.getValue()) : e.getValue());
            return c;
        }
    }

    /** Broadcast state "rules": "r" + value -> value for every rule record of src-union. */
    public static final class Broadcast extends BroadcastProcessFunction<Long, Long, Long> implements CheckpointedFunction {
        private transient BroadcastState<String, Long> rules;
        private int idx;

        @Override
        public void initializeState(FunctionInitializationContext ctx) throws Exception {
            idx = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            rules = ctx.getOperatorStateStore().getBroadcastState(RULES);
            if (ctx.isRestored()) {
                Map<String, Object> m = new TreeMap<>();
                for (Map.Entry<String, Long> e : rules.entries()) m.put(e.getKey(), e.getValue());
                report("broadcast", idx, getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks())
                        .put("broadcast", Json.obj("rules", m));
            }
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            Map<String, Object> m = new TreeMap<>();
            for (Map.Entry<String, Long> e : rules.entries()) m.put(e.getKey(), e.getValue());
            Ctl.contents.put("broadcast/" + idx, Json.obj("rules", m));
        }

        @Override
        public void processElement(Long v, ReadOnlyContext ctx, Collector<Long> out) {
            Ctl.broadcastSeen.incrementAndGet();
            out.collect(v);
        }

        @Override
        public void processBroadcastElement(Long v, Context ctx, Collector<Long> out) throws Exception {
            ctx.getBroadcastState(RULES).put("r" + v, v);
            Ctl.broadcastRulesSeen.incrementAndGet();
        }
    }
}
