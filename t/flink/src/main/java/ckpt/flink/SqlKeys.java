package ckpt.flink;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamGraphHasherV2;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.apache.flink.util.FileUtils;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A Flink SQL job whose GROUP BY keys are of the SQL kinds -k and --max-parallelism hash from the
 * bytes of a BinaryRowData with a variable part (issue 40): ARRAY&lt;INT&gt;, MAP&lt;STRING, INT&gt;,
 * TIME, DECIMAL(38, 10) (16 bytes in the variable part), TIMESTAMP(9) (8), and all of them with a
 * TIMESTAMP_LTZ(6) in one key.  One source of ids 0..ROWS-1; each query is
 * {@code SELECT KEY, MIN(id), COUNT(*) FROM keys GROUP BY KEY}, so a group's MIN(id) names it.
 * Parallelism 2 (the source 1), max parallelism 32, operator ids from the graph's hash
 * (table.exec.uid.generation DISABLED: the ids do not depend on what the JVM planned before).
 *
 * <pre>
 *   (the batch)  sqlkeys/sqlkeys-{hashmap,rocksdb}-canonical and sqlkeys/sidecar.json
 *   java ckpt.flink.Main restore-sqlkeys OUT.json SAVEPOINT_DIR [--backend B] [--parallelism P] [--max-parallelism N] [OUT.json ...]...
 * </pre>
 *
 * The sidecar: "queries" {KIND: SQL}, "refused" {KIND: the planner's message} (a key kind Flink
 * does not group by), "operators" [{kind, id, name}], and "spa": per savepoint what the State
 * Processor API reads, per kind {MIN(id): {"key_group": KeyGroupRangeAssignment.assignToKeyGroup of
 * the key read (Flink's own: the BinaryRowData's hashCode, murmur-hashed, at the max parallelism),
 * "hash": the key's hashCode, "acc": accState's fields}}.  restore-sqlkeys restores the job from
 * SAVEPOINT_DIR at parallelism P (default 2) and max parallelism N (default 32) on backend B
 * (default hashmap), its source emitting nothing; once it runs, a canonical savepoint of it goes to
 * OUT.next/, and OUT.json holds "accepted" true, "spa" (as above, at N) of that one; or "accepted"
 * false with Flink's "message" and "causes".
 */
final class SqlKeys {
    private SqlKeys() {}

    static final int ROWS = 12;
    static final int PARALLELISM = 2;
    static final AtomicLong emitted = new AtomicLong();

    static final String KEYS_VIEW = "SELECT id,"
            + " ARRAY[MOD(id, 4), 7] AS arr,"
            + " MAP['m' || CAST(MOD(id, 3) AS STRING), MOD(id, 3)] AS m,"
            + " CAST('10:0' || CAST(MOD(id, 5) AS STRING) || ':07' AS TIME) AS t,"
            + " CAST(IF(MOD(id, 2) = 1, '-', '') || '1234567890123456789012345678.000000000' || CAST(MOD(id, 6) AS STRING)"
            + " AS DECIMAL(38, 10)) AS d,"
            + " CAST('2024-02-29 10:00:0' || CAST(MOD(id, 5) AS STRING) || '.12345678' || CAST(MOD(id, 3) AS STRING) AS TIMESTAMP(9)) AS ts,"
            + " CAST(CAST('2024-02-29 23:59:59.00000' || CAST(MOD(id, 2) AS STRING) AS TIMESTAMP(6)) AS TIMESTAMP_LTZ(6)) AS ltz"
            + " FROM src";

    static final String[][] QUERIES = {
        {"array", "arr"}, {"map", "m"}, {"time", "t"}, {"decimal", "d"}, {"timestamp", "ts"}, {"all", "arr, m, t, d, ts, ltz"},
    };

    static String query(String key) {
        return "SELECT " + key + ", MIN(id) AS lo, COUNT(*) AS n FROM keys GROUP BY " + key;
    }

    public static final class Ids extends LegacySource<Row> implements StateJob.Cancellable {
        private volatile boolean running = true;

        public boolean running() {
            return running;
        }

        @Override
        protected void produce(Out<Row> out) throws Exception {
            for (int i = 0; Ctl.emit && i < ROWS; i++) {
                out.emit(Row.of(i));
                emitted.incrementAndGet();
            }
            StateJob.idle(this);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    static Configuration conf(String backend) {
        Configuration c = new Configuration();
        c.setString("state.backend.type", backend);
        c.setString("table.exec.uid.generation", "DISABLED");
        c.setString("restart-strategy.type", "none");
        return c;
    }

    /** The job (refused: the kinds the planner refuses to group by, with its message). */
    static StreamGraph build(String backend, int p, int maxp, Map<String, Object> refused) {
        StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, conf(backend), 1, Collections.emptyList(), Collections.emptyList());
        env.setParallelism(p);
        env.setMaxParallelism(maxp);
        StreamTableEnvironment t = StreamTableEnvironment.create(env);
        t.getConfig().set("table.exec.uid.generation", "DISABLED");
        t.getConfig().set("table.local-time-zone", "UTC");
        t.createTemporaryView("src", t.fromDataStream(env.addSource(new Ids()).name("sqlkeys-src").setParallelism(1)
                .returns(new RowTypeInfo(new TypeInformation<?>[] {Types.INT}, new String[] {"id"})),
                Schema.newBuilder().column("id", DataTypes.INT()).build()));
        t.createTemporaryView("keys", t.sqlQuery(KEYS_VIEW));
        for (String[] q : QUERIES) {
            try {
                t.toChangelogStream(t.sqlQuery(query(q[1]))).sinkTo(new DiscardingSink<>()).name("sqlkeys-sink-" + q[0]);
            } catch (Exception e) {
                refused.put(q[0], String.valueOf(e.getMessage()).split("\n")[0]);
            }
        }
        StreamGraph sg = env.getStreamGraph();
        sg.setJobName("ckpt-sqlkeys");
        return sg;
    }

    /** The GROUP BY operators in graph order, each {kind, id, name, node}: the kinds not refused, in QUERIES' order. */
    static List<Map<String, Object>> operators(StreamGraph sg, Map<String, Object> refused) {
        List<StreamNode> nodes = new ArrayList<>(sg.getStreamNodes());
        nodes.sort(Comparator.comparingInt(StreamNode::getId));
        Map<Integer, byte[]> hashes = new StreamGraphHasherV2().traverseStreamGraphAndGenerateHashes(sg);
        List<String> kinds = new ArrayList<>();
        for (String[] q : QUERIES) if (!refused.containsKey(q[0])) kinds.add(q[0]);
        List<Map<String, Object>> ops = new ArrayList<>();
        for (StreamNode n : nodes) {
            if (!n.getOperatorName().startsWith("GroupAggregate")) continue;
            if (ops.size() >= kinds.size()) throw new IllegalStateException("more GROUP BY operators than queries");
            ops.add(Json.obj("kind", kinds.get(ops.size()), "id", new OperatorID(hashes.get(n.getId())).toHexString(),
                    "name", n.getOperatorName(), "node", n.getId()));
        }
        if (ops.size() != kinds.size()) throw new IllegalStateException(ops.size() + " GROUP BY operators for " + kinds.size() + " queries");
        return ops;
    }

    /** Emits "MIN(id)\tKEY_GROUP\tHASH\t[acc...]" per key. */
    public static final class Read extends KeyedStateReaderFunction<RowData, String> {
        private final TypeInformation<?> acc;
        private final int maxp;
        private transient ValueState<RowData> state;

        Read(TypeInformation<?> acc, int maxp) {
            this.acc = acc;
            this.maxp = maxp;
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private void init() {
            state = getRuntimeContext().getState(new ValueStateDescriptor("accState", acc));
        }

        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            init();
        }

        public void open(Configuration c) {
            init();
        }

        @Override
        public void readKey(RowData key, Context ctx, Collector<String> out) throws Exception {
            // a key whose entry lies in another key group than Flink computes for it reads as null
            RowData v = state.value();
            List<?> a = v == null ? null : (List<?>) SqlSpa.render(v, acc);
            out.collect((a == null ? "missing" : String.valueOf(a.get(0))) + "\t" + KeyGroupRangeAssignment.assignToKeyGroup(key, maxp)
                    + "\t" + key.hashCode() + "\t" + Main.JSON.writeValueAsString(a));
        }
    }

    /** Per kind {MIN(id): {key_group, hash, acc}}, read by the State Processor API from savepoint sp of max parallelism maxp. */
    static Map<String, Object> spa(Path sp, StreamGraph sg, List<Map<String, Object>> ops, int maxp) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        for (Map<String, Object> o : ops) {
            StreamNode n = sg.getStreamNode((Integer) o.get("node"));
            Object fn = SqlSpa.operator(n);
            TypeInformation<?> acc = InternalTypeInfo.ofFields((LogicalType[]) SqlSpa.field(fn, "accTypes"));
            TypeInformation<?> keyType = ((ResultTypeQueryable<?>) n.getStatePartitioners()[0]).getProducedType();
            StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, conf("hashmap"), 1, Collections.emptyList(), Collections.emptyList());
            SavepointReader rd = SavepointReader.read(env, sp.toUri().toString(), new HashMapStateBackend());
            Map<String, Object> keys = new TreeMap<>();
            @SuppressWarnings({"unchecked", "rawtypes"})
            CloseableIterator<String> it = rd.readKeyedState(OperatorIdentifier.forUidHash((String) o.get("id")), new Read(acc, maxp),
                    (TypeInformation) keyType, Types.STRING).executeAndCollect("ckpt-sqlkeys-spa-" + o.get("kind"));
            try (it) {
                while (it.hasNext()) {
                    String[] f = it.next().split("\t", 4);
                    Object prev = keys.put(f[0], Json.obj("key_group", Integer.parseInt(f[1]), "hash", Integer.parseInt(f[2]),
                            "acc", Main.JSON.readValue(f[3], Object.class)));
                    if (prev != null) keys.put(f[0] + " again", prev);
                }
            }
            if (keys.isEmpty()) throw new IllegalStateException("State Processor API read nothing of " + o.get("kind") + " in " + sp);
            out.put((String) o.get("kind"), keys);
        }
        return out;
    }

    static void waitRunning(JobClient c, String what) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        for (JobStatus st = c.getJobStatus().get(10, TimeUnit.SECONDS); st != JobStatus.RUNNING; st = c.getJobStatus().get(10, TimeUnit.SECONDS)) {
            if (st.isGloballyTerminalState()) throw new Main.RestoreFailed(what + " failed", RestoreEnc.why(c));
            if (System.nanoTime() > end) throw new IllegalStateException("timed out waiting for " + what + " to run: " + st);
            Thread.sleep(20);
        }
    }

    /** A canonical savepoint of running job c into target (1.20 reports RUNNING while its JobMaster still initializes). */
    static void savepoint(JobClient c, Path target, String what) throws Exception {
        for (int tries = 0;; tries++) {
            try {
                Main.savepoint(c, SavepointFormatType.CANONICAL, target, 120);
                return;
            } catch (Exception e) {
                if (RestoreEnc.failed(c)) throw new Main.RestoreFailed(what + " failed", RestoreEnc.why(c));
                if (tries >= 600 || !String.valueOf(e.getMessage()).contains("JobManager is initializing")) throw e;
                Thread.sleep(100);
            }
        }
    }

    public static void run(MiniCluster mc, Path out) throws Exception {
        Path dir = out.resolve("sqlkeys");
        Files.createDirectories(dir);
        Map<String, Object> refused = new TreeMap<>(), spa = new TreeMap<>(), queries = new LinkedHashMap<>();
        List<Object> names = new ArrayList<>();
        List<Map<String, Object>> ops = null;
        for (String backend : List.of("hashmap", "rocksdb")) {
            Ctl.emit = true;
            emitted.set(0);
            refused.clear();
            StreamGraph sg = build(backend, PARALLELISM, StateJob.MAX_PARALLELISM, refused);
            ops = operators(sg, refused);
            JobClient c = new TestStreamEnvironment(mc, conf(backend), 1, Collections.emptyList(), Collections.emptyList()).executeAsync(sg);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (emitted.get() < ROWS) {
                if (System.nanoTime() > end) throw new IllegalStateException("timed out waiting for the sqlkeys job");
                Thread.sleep(20);
            }
            String name = "sqlkeys-" + backend + "-canonical";
            savepoint(c, dir.resolve(name), "the sqlkeys job");
            Main.cancel(c, "sqlkeys job");
            names.add(name);
            spa.put(name, spa(dir.resolve(name), sg, ops, StateJob.MAX_PARALLELISM));
        }
        for (String[] q : QUERIES) queries.put(q[0], query(q[1]));
        List<Object> opsOut = new ArrayList<>();
        for (Map<String, Object> o : ops) opsOut.add(Json.obj("kind", o.get("kind"), "id", o.get("id"), "name", o.get("name")));
        Json.save(dir.resolve("sidecar.json"), Json.obj("savepoints", names, "view", KEYS_VIEW, "queries", queries, "refused", refused,
                "parallelism", PARALLELISM, "max_parallelism", StateJob.MAX_PARALLELISM, "operators", opsOut, "spa", spa));
    }

    // ---------------------------------------------------------------- restore-sqlkeys

    static int usage(String why) {
        System.err.println("ckpt.flink.Main restore-sqlkeys: " + why);
        System.err.println("usage: ckpt.flink.Main restore-sqlkeys OUT.json SAVEPOINT_DIR [--backend hashmap|rocksdb] [--parallelism P]"
                + " [--max-parallelism N] [OUT.json SAVEPOINT_DIR [...]]...");
        return 2;
    }

    static int restore(String[] args) throws Exception {
        List<Map<String, Object>> reqs = new ArrayList<>();
        Map<String, Object> cur = null;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                if (i + 1 >= args.length) return usage(a + ": no SAVEPOINT_DIR");
                cur = Json.obj("out", Paths.get(a).toAbsolutePath(), "dir", Paths.get(args[++i]).toAbsolutePath(), "backend", "hashmap",
                        "p", PARALLELISM, "maxp", StateJob.MAX_PARALLELISM);
                reqs.add(cur);
                continue;
            }
            if (cur == null) return usage(a + " before OUT.json SAVEPOINT_DIR");
            if (i + 1 >= args.length) return usage(a + ": no value");
            String v = args[++i];
            if (a.equals("--backend") && v.matches("hashmap|rocksdb")) cur.put("backend", v);
            else if (a.equals("--parallelism") && v.matches("[1-9][0-9]{0,4}")) cur.put("p", Integer.parseInt(v));
            else if (a.equals("--max-parallelism") && v.matches("[1-9][0-9]{0,4}")) cur.put("maxp", Integer.parseInt(v));
            else return usage("bad option " + a + " " + v);
        }
        if (reqs.isEmpty()) return usage("nothing to restore");
        Main.out = Files.createTempDirectory("ckpt-flink-restore");
        Main.startCluster();
        try {
            for (Map<String, Object> r : reqs) {
                long t0 = System.nanoTime();
                Path out = (Path) r.get("out");
                Map<String, Object> res = new LinkedHashMap<>();
                res.put("savepoint", r.get("dir").toString());
                res.put("parallelism", r.get("p"));
                res.put("max_parallelism", r.get("maxp"));
                try {
                    res.putAll(restoreOne(r));
                    res.put("accepted", true);
                } catch (Main.RestoreFailed e) {
                    res.put("accepted", false);
                    res.put("message", Restore.message(e.getCause()));
                    res.put("causes", Restore.causes(e.getCause()));
                }
                Json.save(out, res);
                System.out.println(out + ": " + (Boolean.TRUE.equals(res.get("accepted")) ? "restored" : "refused")
                        + " in " + (System.nanoTime() - t0) / 1_000_000L + " ms");
            }
        } finally {
            Main.mc.close();
            FileUtils.deleteDirectory(Main.out.toFile());
        }
        return 0;
    }

    static Map<String, Object> restoreOne(Map<String, Object> r) throws Exception {
        Ctl.emit = false;
        try {
            Map<String, Object> refused = new TreeMap<>();
            int maxp = (Integer) r.get("maxp");
            String backend = (String) r.get("backend");
            StreamGraph sg = build(backend, (Integer) r.get("p"), maxp, refused);
            List<Map<String, Object>> ops = operators(sg, refused);
            sg.setJobName("ckpt-sqlkeys-restore");
            sg.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(((Path) r.get("dir")).toUri().toString(), false));
            JobClient c = RestoreEnc.submit(new TestStreamEnvironment(Main.mc, conf(backend), 1,
                    Collections.emptyList(), Collections.emptyList()), sg);
            Path out = (Path) r.get("out");
            Path next = Paths.get(out.toString().replaceFirst("\\.json$", "") + ".next");
            if (Files.exists(next)) FileUtils.deleteDirectory(next.toFile());
            waitRunning(c, "restore of " + r.get("dir"));
            savepoint(c, next, "restore of " + r.get("dir"));
            Main.cancel(c, "sqlkeys restore");
            return Json.obj("backend", backend, "next", next.toString(), "spa", spa(next, sg, ops, maxp));
        } finally {
            Ctl.emit = true;
        }
    }
}
