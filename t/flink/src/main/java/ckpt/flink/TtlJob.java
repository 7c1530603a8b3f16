package ckpt.flink;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.ttl.TtlStateFactory;
import org.apache.flink.runtime.state.ttl.TtlValue;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keyed state with a time-to-live (issue 26): value "last", list "seen", map "by-parity", reducing
 * "sum" and aggregating "avg", each with StateTtlConfig (7 days: nothing expires), beside value
 * "plain" without one and an event-time timer per key, in three keyed operators of three key types
 * (Long, String, Tuple2&lt;Integer, String&gt;).  Written by the hashmap, RocksDB and (Flink 2.x)
 * ForSt backends as savepoints and checkpoints into ttl/; per artifact ttl/sidecars/NAME.json holds
 * "metadata", "job", "contents" (what the job put, by "UID/SUBTASK" and key), "windows" (per key, the
 * processing time before its first write and after its last: every TTL timestamp is in it), "spa"
 * (the State Processor API with the TTL configuration: the values) and "spa_ttl" (the same states
 * read through Flink's TtlSerializer without a TTL configuration: each value with its timestamp).
 */
public final class TtlJob {
    private TtlJob() {}

    static final int RECORDS = 60;
    static final long TIMER_BASE = 2_000_000_000L;
    static final AtomicLong seen = new AtomicLong();
    static final String[] UIDS = {"ttl-long", "ttl-string", "ttl-tuple"};
    /** "UID/SUBTASK" -> rendered key -> what the job put for it. */
    static final Map<String, Map<String, Mirror>> mirror = new ConcurrentHashMap<>();

    static StateTtlConfig ttl() {
        return StateTtlConfig.newBuilder(Duration.ofDays(7)).build();
    }

    static <D extends StateDescriptor<?, ?>> D withTtl(D d) {
        d.enableTimeToLive(ttl());
        return d;
    }

    /** [sum, count] of the records seen: the aggregating state's accumulator. */
    public static final class Avg implements AggregateFunction<Integer, Tuple2<Long, Long>, Double> {
        public Tuple2<Long, Long> createAccumulator() {
            return Tuple2.of(0L, 0L);
        }

        public Tuple2<Long, Long> add(Integer v, Tuple2<Long, Long> a) {
            return Tuple2.of(a.f0 + v, a.f1 + 1);
        }

        public Double getResult(Tuple2<Long, Long> a) {
            return a.f1 == 0 ? null : (double) a.f0 / a.f1;
        }

        public Tuple2<Long, Long> merge(Tuple2<Long, Long> a, Tuple2<Long, Long> b) {
            return Tuple2.of(a.f0 + b.f0, a.f1 + b.f1);
        }
    }

    static final TypeInformation<Tuple2<Long, Long>> ACC = Types.TUPLE(Types.LONG, Types.LONG);

    static final class States {
        final ValueState<Long> last;
        final ListState<String> seen;
        final MapState<String, Long> byParity;
        final ReducingState<Long> sum;
        final AggregatingState<Integer, Double> avg;
        final ValueState<Long> plain;

        States(RuntimeContext c) {
            last = c.getState(withTtl(new ValueStateDescriptor<>("last", Types.LONG)));
            seen = c.getListState(withTtl(new ListStateDescriptor<>("seen", Types.STRING)));
            byParity = c.getMapState(withTtl(new MapStateDescriptor<>("by-parity", Types.STRING, Types.LONG)));
            sum = c.getReducingState(withTtl(new ReducingStateDescriptor<>("sum", Long::sum, Types.LONG)));
            avg = c.getAggregatingState(withTtl(new AggregatingStateDescriptor<>("avg", new Avg(), ACC)));
            plain = c.getState(new ValueStateDescriptor<>("plain", Types.LONG));
        }
    }

    /** What the job put for one key, and when: in the sidecar's shape. */
    static final class Mirror {
        int keyGroup;
        long last, sum, plain, accSum, accCount, timer, lo = Long.MAX_VALUE, hi;
        final List<String> seen = new ArrayList<>();
        final Map<String, Long> byParity = new TreeMap<>();

        Map<String, Object> render() {
            List<String> s = new ArrayList<>(seen);
            s.sort(null);
            return Json.obj("key_group", keyGroup, "last", last, "seen", s, "by-parity", new TreeMap<>(byParity),
                    "sum", sum, "avg", List.of(accSum, accCount), "plain", plain, "event_timer", String.valueOf(timer));
        }
    }

    /** The key of record i in operator uid, and how ckpt-inspect's typed key prints (jq's tostring). */
    static Object key(String uid, int i) {
        switch (uid) {
            case "ttl-long": return (long) (i % 7) * 1_000_003L - 3;
            case "ttl-string": return "s" + (i % 5) + "\u00e9".repeat(i % 2);
            default: return Tuple2.of(i % 3 - 1, "t" + (i % 4));
        }
    }

    static String render(Object k) {
        if (k instanceof Tuple2) {
            Tuple2<?, ?> t = (Tuple2<?, ?>) k;
            try {
                return Main.JSON.writeValueAsString(List.of(t.f0, t.f1));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }
        return String.valueOf(k);
    }

    public static final class Put<K> extends KeyedProcessFunction<K, Integer, String> {
        private final String uid;
        private transient States st;

        Put(String uid) {
            this.uid = uid;
        }

        @Override
        public void open(OpenContext ctx) {
            st = new States(getRuntimeContext());
        }

        @Override
        public void processElement(Integer i, Context ctx, Collector<String> out) throws Exception {
            K k = ctx.getCurrentKey();
            Mirror m = mirror(uid, getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), k);
            long before = System.currentTimeMillis();
            String parity = i % 2 == 0 ? "even" : "odd";
            st.last.update((long) i);
            st.seen.add("e" + i);
            Long p = st.byParity.get(parity);
            st.byParity.put(parity, p == null ? 1 : p + 1);
            st.sum.add((long) i);
            st.avg.add(i);
            Long n = st.plain.value();
            st.plain.update(n == null ? 1 : n + 1);
            long timer = timer(k);
            ctx.timerService().registerEventTimeTimer(timer);
            record(m, k, i, before, System.currentTimeMillis());
        }
    }

    static long timer(Object k) {
        return TIMER_BASE + Math.abs(render(k).hashCode() % 1000);
    }

    /** What record i put for key k, written between before and after. */
    static void record(Mirror m, Object k, int i, long before, long after) {
            String parity = i % 2 == 0 ? "even" : "odd";
            long timer = timer(k);
            m.keyGroup = KeyGroupRangeAssignment.assignToKeyGroup(k, StateJob.MAX_PARALLELISM);
            m.last = i;
            m.seen.add("e" + i);
            m.byParity.merge(parity, 1L, Long::sum);
            m.sum += i;
            m.accSum += i;
            m.accCount++;
            m.plain++;
            m.timer = timer;
            m.lo = Math.min(m.lo, before);
            m.hi = Math.max(m.hi, after);
            seen.incrementAndGet();
    }

    static Mirror mirror(String uid, int subtask, Object k) {
        return mirror.computeIfAbsent(uid + "/" + subtask, x -> new ConcurrentHashMap<>()).computeIfAbsent(render(k), x -> new Mirror());
    }

    /** Emits 0..RECORDS-1 once, then idles until cancelled. */
    public static final class Src extends LegacySource<Integer> implements StateJob.Cancellable {
        private volatile boolean running = true;

        public boolean running() {
            return running;
        }

        @Override
        protected void produce(Out<Integer> out) throws Exception {
            for (int i = 0; i < RECORDS; i++) out.emit(i);
            StateJob.idle(this);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    /** backend: hashmap, rocksdb, forst, or forst-async (ForSt with the states asynchronous, State V2). */
    static Configuration conf(Path dir, String backend) {
        Configuration c = new Configuration();
        c.set(StateBackendOptions.STATE_BACKEND, backend.replace("-async", ""));
        c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, dir.resolve("checkpoints").resolve(backend).toUri().toString());
        c.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        c.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofHours(1));
        c.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        // every state in a file of its own (SST files too), none inline in _metadata
        c.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, org.apache.flink.configuration.MemorySize.ZERO);
        // ForSt's SST files in the task manager's local directory, not the checkpoint directory
        if (backend.startsWith("forst")) c.set(ConfigOptions.key("state.backend.forst.primary-dir").stringType().noDefaultValue(), "local-dir");
        return c;
    }

    static Map<String, Object> jobDesc;

    /** The same states as State V2 (asynchronous state, Flink 2.x: TtlAsync.java), on keyed. */
    @SuppressWarnings("unchecked")
    static org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator<String> asyncPut(
            org.apache.flink.streaming.api.datastream.KeyedStream<Integer, Object> keyed, String uid) {
        try {
            return (org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator<String>) Class.forName("ckpt.flink.TtlAsync")
                    .getMethod("attach", org.apache.flink.streaming.api.datastream.KeyedStream.class, String.class).invoke(null, keyed, uid);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no asynchronous state in Flink " + org.apache.flink.runtime.util.EnvironmentInformation.getVersion(), e);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static JobClient start(Path dir, String backend) throws Exception {
        boolean async = backend.endsWith("-async");
        StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, conf(dir, backend), 1, Collections.emptyList(), Collections.emptyList());
        env.setMaxParallelism(StateJob.MAX_PARALLELISM);
        DataStream<Integer> src = env.addSource(new Src(), "ttl-src", Types.INT).uid("ttl-src").name("ttl-src").setParallelism(1);
        int[] par = {2, 2, 1};
        TypeInformation<?>[] kt = {Types.LONG, Types.STRING, Types.TUPLE(Types.INT, Types.STRING)};
        for (int o = 0; o < UIDS.length; o++) {
            final String uid = UIDS[o];
            KeySelector<Integer, Object> ks = i -> key(uid, i);
            org.apache.flink.streaming.api.datastream.KeyedStream<Integer, Object> keyed = src.keyBy(ks, (TypeInformation) kt[o]);
            (async ? asyncPut(keyed, uid) : keyed.process(new Put<>(uid))).uid(uid).name(uid).setParallelism(par[o]).returns(Types.STRING);
        }
        StreamGraph sg = env.getStreamGraph();
        sg.setJobName("ckpt-ttl-" + backend);
        jobDesc = Main.graph(sg);
        mirror.clear();
        seen.set(0);
        return env.executeAsync(sg);
    }

    // ---------------------------------------------------------------- the State Processor API

    /** Every state of a key, read with the job's descriptors (raw: the TTL wrappers themselves). */
    public static final class Read<K> extends KeyedStateReaderFunction<K, String> {
        private final boolean raw;
        private transient ValueState<Object> last, plain;
        private transient ListState<Object> seenSt;
        private transient MapState<String, Object> byParity;
        private transient ReducingState<Object> sum;
        private transient AggregatingState<Object, Object> avg;

        Read(boolean raw) {
            this.raw = raw;
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private void init() {
            RuntimeContext c = getRuntimeContext();
            plain = c.getState(new ValueStateDescriptor<>("plain", (TypeInformation) Types.LONG));
            if (!raw) {
                States s = new States(c);
                last = (ValueState) s.last;
                seenSt = (ListState) s.seen;
                byParity = (MapState) s.byParity;
                sum = (ReducingState) s.sum;
                avg = (AggregatingState) s.avg;
                return;
            }
            TypeSerializer<Long> ts = LongSerializer.INSTANCE;
            TypeSerializer ls = new TtlStateFactory.TtlSerializer<>(ts, LongSerializer.INSTANCE);
            TypeSerializer ss = new TtlStateFactory.TtlSerializer<>(ts, org.apache.flink.api.common.typeutils.base.StringSerializer.INSTANCE);
            TypeSerializer as = new TtlStateFactory.TtlSerializer<>(ts, new org.apache.flink.api.java.typeutils.runtime.TupleSerializer<>((Class) Tuple2.class, new TypeSerializer<?>[] {LongSerializer.INSTANCE, LongSerializer.INSTANCE}));
            last = c.getState(new ValueStateDescriptor<>("last", ls));
            seenSt = c.getListState(new ListStateDescriptor<>("seen", ss));
            byParity = c.getMapState(new MapStateDescriptor<>("by-parity", org.apache.flink.api.common.typeutils.base.StringSerializer.INSTANCE, ls));
            sum = c.getReducingState(new ReducingStateDescriptor<>("sum", (a, b) -> b, ls));
            avg = c.getAggregatingState(new AggregatingStateDescriptor<>("avg", new Identity(), as));
        }

        public void open(OpenContext ctx) {
            init();
        }

        public void open(Configuration c) {
            init();
        }

        /** A TTL value as ckpt-state(5) writes it: {"last_access", "value"}; else the value. */
        Object v(Object x) {
            if (x instanceof TtlValue) {
                TtlValue<?> t = (TtlValue<?>) x;
                return Json.obj("last_access", t.getLastAccessTimestamp(), "value", v(t.getUserValue()));
            }
            if (x instanceof Tuple2) return List.of(((Tuple2<?, ?>) x).f0, ((Tuple2<?, ?>) x).f1);
            return x;
        }

        @Override
        public void readKey(K key, Context ctx, Collector<String> out) throws Exception {
            List<Object> s = new ArrayList<>();
            for (Object e : seenSt.get()) s.add(v(e));
            s.sort((a, b) -> String.valueOf(a instanceof Map ? ((Map<?, ?>) a).get("value") : a)
                    .compareTo(String.valueOf(b instanceof Map ? ((Map<?, ?>) b).get("value") : b)));
            Map<String, Object> bp = new TreeMap<>();
            for (Map.Entry<String, Object> e : byParity.entries()) bp.put(e.getKey(), v(e.getValue()));
            List<String> timers = new ArrayList<>();
            for (Long t : ctx.registeredEventTimeTimers()) timers.add(String.valueOf(t));
            Map<String, Object> m = Json.obj("last", v(last.value()), "seen", s, "by-parity", bp, "sum", v(sum.get()));
            // raw: the accumulator [sum, count]; through the TTL configuration the state gives the mean
            m.put("avg", v(avg.get()));
            m.put("plain", plain.value());
            m.put("event_timers", timers);
            out.collect(render(key) + "\t" + Main.JSON.writeValueAsString(m));
        }
    }

    /** The accumulator itself as the aggregating state's result (raw reading). */
    public static final class Identity implements AggregateFunction<Object, Object, Object> {
        public Object createAccumulator() {
            return null;
        }

        public Object add(Object v, Object a) {
            return a;
        }

        public Object getResult(Object a) {
            return a;
        }

        public Object merge(Object a, Object b) {
            return a;
        }
    }

    static StateBackend instance(String cls) throws Exception {
        return (StateBackend) Class.forName(cls).getDeclaredConstructor().newInstance();
    }

    static StateBackend backend(String name) throws Exception {
        switch (name) {
            case "hashmap": return new HashMapStateBackend();
            case "rocksdb": // its package moved in 2.0
                try {
                    return instance("org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend");
                } catch (ClassNotFoundException e) {
                    return instance("org.apache.flink.contrib.streaming.state.EmbeddedRocksDBStateBackend");
                }
            default: return instance("org.apache.flink.state.forst.ForStStateBackend"); // Flink 2.x only
        }
    }

    /** {"UID": {"KEY": {...}}} as the State Processor API reads it from dir, or {"error": message}. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static Map<String, Object> spa(Path dir, String backend, boolean raw) {
        try {
            Configuration c = new Configuration();
            if (backend.startsWith("forst")) c.set(ConfigOptions.key("state.backend.forst.primary-dir").stringType().noDefaultValue(), "local-dir");
            StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList());
            SavepointReader r = SavepointReader.read(env, dir.toUri().toString(), backend(backend));
            TypeInformation<?>[] kt = {Types.LONG, Types.STRING, Types.TUPLE(Types.INT, Types.STRING)};
            DataStream<String> all = null;
            for (int o = 0; o < UIDS.length; o++) {
                final String uid = UIDS[o];
                DataStream<String> s = r.readKeyedState(OperatorIdentifier.forUid(uid), new Read(raw), (TypeInformation) kt[o], Types.STRING)
                        .map(x -> uid + "\t" + x).returns(Types.STRING).name("tag-" + uid);
                all = all == null ? s : all.union(s);
            }
            Map<String, Object> out = new TreeMap<>();
            try (CloseableIterator<String> it = all.executeAndCollect("ckpt-ttl-spa-" + dir.getFileName())) {
                while (it.hasNext()) {
                    String[] f = it.next().split("\t", 3);
                    ((Map<String, Object>) out.computeIfAbsent(f[0], k -> new TreeMap<>()))
                            .put(f[1], Main.JSON.readValue(f[2], java.util.LinkedHashMap.class));
                }
            }
            if (out.size() != UIDS.length) throw new IllegalStateException("read " + out.keySet() + " of " + List.of(UIDS));
            return out;
        } catch (Exception e) {
            return Json.obj("error", chain(e));
        }
    }

    // ---------------------------------------------------------------- the run

    static Map<String, Object> contents() {
        Map<String, Object> c = new TreeMap<>();
        for (Map.Entry<String, Map<String, Mirror>> e : mirror.entrySet()) {
            Map<String, Object> keys = new TreeMap<>();
            for (Map.Entry<String, Mirror> k : e.getValue().entrySet()) keys.put(k.getKey(), k.getValue().render());
            c.put(e.getKey(), Json.obj("keys", keys));
        }
        return c;
    }

    static Map<String, Object> windows() {
        Map<String, Object> w = new TreeMap<>();
        for (Map.Entry<String, Map<String, Mirror>> e : mirror.entrySet()) {
            Map<String, Object> keys = new TreeMap<>();
            for (Map.Entry<String, Mirror> k : e.getValue().entrySet()) keys.put(k.getKey(), List.of(k.getValue().lo, k.getValue().hi));
            w.put(e.getKey(), keys);
        }
        return w;
    }

    static final List<Object> index = new ArrayList<>();

    /** e's messages, cause after cause, and those of what it suppressed. */
    static String chain(Throwable e) {
        StringBuilder m = new StringBuilder();
        Throwable last = e;
        for (Throwable t = e; t != null; t = t.getCause()) {
            m.append(m.length() > 0 ? " <- " : "").append(t);
            for (Throwable x : t.getSuppressed()) m.append(" [suppressed: ").append(chain(x)).append("]");
            last = t;
        }
        // where the innermost was thrown
        StackTraceElement[] st = last.getStackTrace();
        for (int i = 0; i < Math.min(4, st.length); i++) m.append(i == 0 ? " at " : ", ").append(st[i]);
        return m.toString();
    }

    static void artifact(Path dir, String name, String kind, String backend, JobClient c, Path at) throws Exception {
        Map<String, Object> side = Json.obj("artifact", name, "kind", kind, "backend", backend,
                "path", dir.relativize(at).toString(), "job_id", c.getJobID().toString(),
                "metadata", Meta.read(at.resolve("_metadata")), "job", jobDesc, "contents", contents(), "windows", windows());
        Json.save(dir.resolve("sidecars").resolve(name + ".json"), side);
        index.add(Json.obj("name", name, "kind", kind, "backend", backend, "path", dir.relativize(at).toString(),
                "sidecar", "sidecars/" + name + ".json"));
    }

    /** The artifacts of one backend: savepoints (canonical, native) and a retained checkpoint. */
    static void write(Path dir, String backend, List<String> what) throws Exception {
        JobClient c = start(dir, backend);
        long n = (long) RECORDS * UIDS.length;
        Main.waitFor("every record of the ttl job (" + backend + ")", () -> seen.get() == n);
        try {
            artifacts(dir, backend, what, c);
        } catch (Exception e) {
            // the job's own failure, when it failed: why the snapshot was not taken
            Throwable why = null;
            try {
                c.getJobExecutionResult().get(30, TimeUnit.SECONDS);
            } catch (Exception f) {
                why = f;
            }
            if (why != null) e.addSuppressed(why);
            try {
                e.addSuppressed(new Exception("REST exceptions: " + Main.get("/jobs/" + c.getJobID() + "/exceptions")));
            } catch (Exception f) {
                e.addSuppressed(f);
            }
            throw e;
        }
        Main.cancel(c, "ttl job");
    }

    /** Snapshots a backend refused (ForSt: canonical savepoints): name -> Flink's innermost message. */
    static final Map<String, String> refused = new TreeMap<>();

    static void artifacts(Path dir, String backend, List<String> what, JobClient c) throws Exception {
        for (String w : what) {
            if (w.endsWith("?")) { // may be refused; the job then fails over, so it comes last
                String name = "ttl-" + backend + "-" + w.substring(0, w.length() - 1);
                try {
                    artifacts(dir, backend, List.of(w.substring(0, w.length() - 1)), c);
                } catch (java.util.concurrent.ExecutionException e) {
                    String ex = Main.get("/jobs/" + c.getJobID() + "/exceptions");
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("Caused by: ([^\\n\n]*)").matcher(
                            Main.JSON.readTree(ex).path("exceptionHistory").path("entries").path(0).path("stacktrace").asText());
                    String msg = null;
                    while (m.find()) msg = m.group(1);
                    refused.put(name, msg == null ? chain(e) : msg);
                }
                continue;
            }
            String name = "ttl-" + backend + "-" + w;
            if (w.equals("incremental")) {
                Path at = Main.local(Main.trigger(c.getJobID()));
                artifact(dir, name, "checkpoint", backend, c, at);
            } else {
                SavepointFormatType f = w.equals("native") ? SavepointFormatType.NATIVE : SavepointFormatType.CANONICAL;
                artifact(dir, name, "savepoint", backend, c, Main.savepoint(c, f, dir.resolve(name)));
            }
        }
    }

    /** Every artifact into out/ttl/, then what the State Processor API reads back from each. */
    @SuppressWarnings("unchecked")
    public static void run(Path out) throws Exception {
        Path dir = out.resolve("ttl");
        Files.createDirectories(dir.resolve("sidecars"));
        index.clear();
        refused.clear();
        Map<String, String> errors = new TreeMap<>();
        // -Dckpt.ttl.backends=forst: those backends alone (trying one out)
        List<String> backends = List.of(System.getProperty("ckpt.ttl.backends", "hashmap,rocksdb,forst,forst-async").split(","));
        if (backends.contains("hashmap")) write(dir, "hashmap", List.of("canonical"));
        if (backends.contains("rocksdb")) write(dir, "rocksdb", List.of("canonical", "native", "incremental"));
        if (backends.contains("forst") && org.apache.flink.runtime.util.EnvironmentInformation.getVersion().startsWith("2.")) {
            try {
                write(dir, "forst", List.of("native", "incremental", "canonical?"));
            } catch (Exception e) {
                errors.put("forst", chain(e));
            }
        }
        if (backends.contains("forst-async") && org.apache.flink.runtime.util.EnvironmentInformation.getVersion().startsWith("2.")) {
            try {
                write(dir, "forst-async", List.of("native", "incremental"));
            } catch (Exception e) {
                errors.put("forst-async", chain(e));
            }
        }
        for (Object o : index) {
            Map<String, Object> a = (Map<String, Object>) o;
            Path sc = dir.resolve((String) a.get("sidecar"));
            Map<String, Object> side = Main.JSON.readValue(sc.toFile(), java.util.LinkedHashMap.class);
            Path at = dir.resolve((String) a.get("path"));
            String backend = (String) a.get("backend");
            // a canonical savepoint is read by any backend; the others by their own
            String rb = ((String) a.get("name")).endsWith("-canonical") ? "hashmap" : backend;
            Map<String, Object> spa = spa(at, rb, false);
            if (spa.containsKey("error") && rb.startsWith("forst")) {
                // the State Processor API cannot restore ForSt's snapshots with ForSt: RocksDB reads them
                side.put("spa_forst_error", spa.get("error"));
                rb = "rocksdb";
                spa = spa(at, rb, false);
            }
            side.put("spa_backend", rb);
            side.put("spa", spa);
            side.put("spa_ttl", spa(at, rb, true));
            Json.save(sc, side);
        }
        Json.save(dir.resolve("sidecar.json"), Json.obj("ttl_days", 7, "records", RECORDS, "artifacts", index, "refused", refused, "errors", errors));
    }
}
