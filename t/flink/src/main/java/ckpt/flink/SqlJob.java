package ckpt.flink;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
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
 * A Flink SQL job (issue 27): the Table API over two controlled sources ("orders": id INT, k
 * STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3) the rowtime, note STRING; "customers": k STRING,
 * name STRING), six queries whose state is known once every row is through: a GROUP BY aggregate
 * (COUNT, SUM, MAX of a DECIMAL and of a TIMESTAMP(3)), deduplication keeping the first and the
 * last row (rowtime), a regular inner join, a tumbling event-time window aggregate (every row in
 * one hour: no window fires) and a Top-2.  A canonical hashmap savepoint goes to sql/, with
 * sql/sidecar.json: the rows put in, what each operator's state must hold (computed here), the
 * operators (uid, name, kind) and what the State Processor API reads back (SqlSpa.java).
 *
 * ckpt.sql.rows (default 40), ckpt.sql.keys (default 5), ckpt.sql.note (length of the note,
 * default 8) scale it: t/bench/sqlstate.sh writes its savepoint of about 256 MiB so
 * (`ckpt.sql.out=DIR`: the savepoint alone into DIR, no sidecar).
 */
public final class SqlJob {
    private SqlJob() {}

    static final AtomicLong emitted = new AtomicLong();
    static final long BASE = LocalDateTime.of(2024, 1, 1, 10, 0).toInstant(ZoneOffset.UTC).toEpochMilli();

    static int rows() {
        return Integer.getInteger("ckpt.sql.rows", 40);
    }

    static int keys() {
        return Integer.getInteger("ckpt.sql.keys", 5);
    }

    static int noteLength() {
        return Integer.getInteger("ckpt.sql.note", 8);
    }

    // ---------------------------------------------------------------- the input, by row number

    static String key(int i) {
        return "k" + (i % keys());
    }

    /** Distinct for every row under 1000003 rows (7919 and the prime 1000003), negative for some. */
    static BigDecimal amount(int i) {
        return new BigDecimal(BigInteger.valueOf((long) i * 7919 % 1000003 - 500000), 2);
    }

    /** Every row in the hour from 10:00: 1001 ms apart (a few rows), else 1 ms. */
    static long tsMillis(int i) {
        long step = (long) rows() * 1001 < 3_600_000L ? 1001 : 1;
        return BASE + i * step;
    }

    static LocalDateTime ts(int i) {
        return LocalDateTime.ofEpochSecond(Math.floorDiv(tsMillis(i), 1000), (int) Math.floorMod(tsMillis(i), 1000) * 1_000_000,
                ZoneOffset.UTC);
    }

    static String note(int i) {
        StringBuilder b = new StringBuilder("n" + i);
        while (b.length() < noteLength()) b.append('x');
        return b.toString();
    }

    /** Customers: one per key, k1 twice (a record counted 2 in the join's state), k99 with no order. */
    static List<String[]> customers() {
        List<String[]> c = new ArrayList<>();
        for (int k = 0; k < keys(); k++) c.add(new String[] {"k" + k, "name-k" + k});
        c.add(new String[] {"k1", "name-k1"});
        c.add(new String[] {"k99", "name-k99"});
        return c;
    }

    /** As ckpt-state(5) prints a TIMESTAMP(3): yyyy-mm-ddThh:mm:ss, the milliseconds when not 0. */
    static String tsText(long millis) {
        LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(millis, 1000), 0, ZoneOffset.UTC);
        String s = String.format("%04d-%02d-%02dT%02d:%02d:%02d", t.getYear(), t.getMonthValue(), t.getDayOfMonth(),
                t.getHour(), t.getMinute(), t.getSecond());
        long ms = Math.floorMod(millis, 1000);
        return ms == 0 ? s : s + String.format(".%03d", ms);
    }

    // ---------------------------------------------------------------- the sources

    public static final class Orders extends LegacySource<Row> implements StateJob.Cancellable {
        private volatile boolean running = true;

        public boolean running() {
            return running;
        }

        @Override
        protected void produce(Out<Row> out) throws Exception {
            for (int i = 0; Ctl.emit && i < rows(); i++) { // a restore (RestoreEnc) emits nothing
                out.emit(Row.of(i, key(i), amount(i), ts(i), note(i)));
                emitted.incrementAndGet();
            }
            StateJob.idle(this);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    public static final class Customers extends LegacySource<Row> implements StateJob.Cancellable {
        private volatile boolean running = true;

        public boolean running() {
            return running;
        }

        @Override
        protected void produce(Out<Row> out) throws Exception {
            for (String[] c : Ctl.emit ? customers() : List.<String[]>of()) {
                out.emit(Row.of(c[0], c[1]));
                emitted.incrementAndGet();
            }
            StateJob.idle(this);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    // ---------------------------------------------------------------- the job

    static final String[][] QUERIES = {
        {"group", "SELECT k, COUNT(*) AS cnt, SUM(amount) AS total, MAX(amount) AS max_amount,"
                + " MAX(CAST(ts AS TIMESTAMP(3))) AS max_ts FROM orders GROUP BY k"},
        {"dedup-first", "SELECT id, k, amount, ts, note FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC)"
                + " AS rn FROM orders) WHERE rn = 1"},
        {"dedup-last", "SELECT id, k, amount, ts, note FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC)"
                + " AS rn FROM orders) WHERE rn = 1"},
        {"join", "SELECT o.id, o.k, o.amount, o.note, c.name FROM (SELECT id, k, amount, note FROM orders) o"
                + " JOIN customers c ON o.k = c.k"},
        {"window", "SELECT k, TUMBLE_START(ts, INTERVAL '1' HOUR) AS ws, COUNT(*) AS cnt, SUM(amount) AS total"
                + " FROM orders GROUP BY k, TUMBLE(ts, INTERVAL '1' HOUR)"},
        {"topn", "SELECT k, id, amount FROM (SELECT k, id, amount, ROW_NUMBER() OVER (PARTITION BY k ORDER BY amount DESC)"
                + " AS rn FROM orders) WHERE rn <= 2"},
    };

    static Configuration conf() {
        Configuration c = new Configuration();
        c.setString("state.backend.type", "hashmap");
        c.setString("table.exec.uid.generation", "ALWAYS");
        // a file checkpoint storage: the JobManager's refuses state over 5 MiB (the bench's savepoint)
        c.setString("state.checkpoints.dir", Main.out.resolve("checkpoints").resolve("sql").toUri().toString());
        return c;
    }

    static StreamGraph build(MiniCluster mc) {
        return build(mc, 1, StateJob.MAX_PARALLELISM);
    }

    /** The job with its SQL operators at parallelism p, max parallelism maxp (a restore's: RestoreEnc); the sources at 1. */
    static StreamGraph build(MiniCluster mc, int p, int maxp) {
        StreamExecutionEnvironment env = new TestStreamEnvironment(mc, conf(), 1, Collections.emptyList(), Collections.emptyList());
        env.setParallelism(p);
        env.setMaxParallelism(maxp);
        StreamTableEnvironment t = StreamTableEnvironment.create(env);
        t.getConfig().set("table.exec.uid.generation", "ALWAYS");
        t.getConfig().set("table.local-time-zone", "UTC");
        DataStream<Row> orders = env.addSource(new Orders()).uid("sql-orders").name("sql-orders").setParallelism(1)
                .returns(new RowTypeInfo(new TypeInformation<?>[] {Types.INT, Types.STRING, Types.BIG_DEC, Types.LOCAL_DATE_TIME, Types.STRING},
                        new String[] {"id", "k", "amount", "ts", "note"}));
        DataStream<Row> customers = env.addSource(new Customers()).uid("sql-customers").name("sql-customers").setParallelism(1)
                .returns(new RowTypeInfo(new TypeInformation<?>[] {Types.STRING, Types.STRING}, new String[] {"k", "name"}));
        t.createTemporaryView("orders", t.fromDataStream(orders, Schema.newBuilder()
                .column("id", DataTypes.INT()).column("k", DataTypes.STRING()).column("amount", DataTypes.DECIMAL(10, 2))
                .column("ts", DataTypes.TIMESTAMP(3)).column("note", DataTypes.STRING())
                .watermark("ts", "ts - INTERVAL '1' SECOND").build()));
        t.createTemporaryView("customers", t.fromDataStream(customers, Schema.newBuilder()
                .column("k", DataTypes.STRING()).column("name", DataTypes.STRING()).build()));
        for (String[] q : QUERIES) {
            t.toChangelogStream(t.sqlQuery(q[1])).sinkTo(new DiscardingSink<>()).uid("sql-sink-" + q[0]).name("sql-sink-" + q[0]);
        }
        StreamGraph sg = env.getStreamGraph();
        sg.setJobName("ckpt-sql");
        return sg;
    }

    /** The SQL operators of the graph, by kind (from the operator names the planner gives). */
    static List<Map<String, Object>> operators(StreamGraph sg) {
        List<StreamNode> nodes = new ArrayList<>(sg.getStreamNodes());
        nodes.sort(Comparator.comparingInt(StreamNode::getId));
        // the operator id Flink derives from the uid (a 1.20 savepoint holds the id alone)
        Map<Integer, byte[]> hashes = new org.apache.flink.streaming.api.graph.StreamGraphHasherV2().traverseStreamGraphAndGenerateHashes(sg);
        List<Map<String, Object>> ops = new ArrayList<>();
        for (StreamNode n : nodes) {
            String name = n.getOperatorName();
            String kind = null;
            if (name.startsWith("GroupAggregate")) kind = "group";
            else if (name.startsWith("Deduplicate")) kind = keepLast(n) ? "dedup-last" : "dedup-first";
            else if (name.startsWith("Join")) kind = "join";
            else if (name.startsWith("GroupWindowAggregate") || name.startsWith("WindowAggregate")) kind = "window";
            else if (name.startsWith("Rank")) kind = "topn";
            Map<String, Object> o = Json.obj("uid", n.getTransformationUID(), "id",
                    new org.apache.flink.runtime.jobgraph.OperatorID(hashes.get(n.getId())).toHexString(), "name", name, "kind", kind);
            ops.add(o);
        }
        return ops;
    }

    /** The deduplication's own flag (the operator's name does not say which row it keeps). */
    static boolean keepLast(StreamNode n) {
        if (SqlSpa.operator(n).getClass().getSimpleName().equals("RowTimeDeduplicateKeepFirstRowFunction")) return false;
        try {
            return (Boolean) SqlSpa.field(SqlSpa.operator(n), "keepLastRow");
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no keepLastRow in the deduplication " + n.getOperatorName(), e);
        }
    }

    // ---------------------------------------------------------------- what the state must hold

    static Map<String, Object> expected() {
        Map<String, Object> group = new TreeMap<>(), first = new TreeMap<>(), last = new TreeMap<>(), window = new TreeMap<>(),
                topn = new TreeMap<>(), left = new TreeMap<>(), right = new TreeMap<>();
        Map<String, List<Integer>> byKey = new TreeMap<>();
        for (int i = 0; i < rows(); i++) byKey.computeIfAbsent(key(i), x -> new ArrayList<>()).add(i);
        for (Map.Entry<String, List<Integer>> e : byKey.entrySet()) {
            List<Integer> is = e.getValue();
            BigDecimal sum = BigDecimal.ZERO.setScale(2), max = null;
            long maxTs = Long.MIN_VALUE;
            Map<String, Object> l = new TreeMap<>();
            for (int i : is) {
                sum = sum.add(amount(i));
                if (max == null || amount(i).compareTo(max) > 0) max = amount(i);
                maxTs = Math.max(maxTs, tsMillis(i));
                l.put(Main.JSON.valueToTree(List.of(i, key(i), amount(i).toPlainString(), note(i))).toString(), 1);
            }
            // accumulators in the order of the aggregate calls: COUNT(*), SUM, MAX, MAX
            group.put(e.getKey(), List.of(is.size(), sum.toPlainString(), max.toPlainString(), tsText(maxTs)));
            first.put(e.getKey(), orderRow(is.get(0)));
            last.put(e.getKey(), orderRow(is.get(is.size() - 1)));
            long start = tsMillis(is.get(0)) - Math.floorMod(tsMillis(is.get(0)), 3_600_000L);
            window.put(e.getKey(), Json.obj("window_start", start, "window_end", start + 3_600_000L,
                    "acc", List.of(is.size(), sum.toPlainString())));
            List<Integer> sorted = new ArrayList<>(is);
            sorted.sort((a, b) -> amount(b).compareTo(amount(a)));
            List<Object> top = new ArrayList<>();
            // the rows the Top-N keeps are its input's (id, k, amount), as the planner projects them
            for (int i : sorted.subList(0, Math.min(2, sorted.size()))) top.add(List.of(i, e.getKey(), amount(i).toPlainString()));
            topn.put(e.getKey(), top);
            left.put(e.getKey(), l);
        }
        for (String[] c : customers()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> r = (Map<String, Object>) right.computeIfAbsent(c[0], x -> new TreeMap<String, Object>());
            String row = Main.JSON.valueToTree(List.of(c[0], c[1])).toString();
            r.put(row, ((Integer) r.getOrDefault(row, 0)) + 1);
        }
        return Json.obj("group", group, "dedup-first", first, "dedup-last", last, "join", Json.obj("left", left, "right", right),
                "window", window, "topn", topn);
    }

    static List<Object> orderRow(int i) {
        return List.of(i, key(i), amount(i).toPlainString(), tsText(tsMillis(i)), note(i));
    }

    // ---------------------------------------------------------------- the run

    /** Runs the job until every row is through, savepoints it (canonical, hashmap) into dir/name. */
    static StreamGraph savepoint(MiniCluster mc, Path target) throws Exception {
        Ctl.emit = true; // the sources emit (a restore of RestoreEnc's does not)
        StreamGraph sg = build(mc);
        emitted.set(0);
        JobClient c = new TestStreamEnvironment(mc, conf(), 1, Collections.emptyList(), Collections.emptyList()).executeAsync(sg);
        long want = rows() + customers().size();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.getLong("ckpt.sql.timeout", 120));
        while (emitted.get() < want) {
            if (System.nanoTime() > end) throw new IllegalStateException("timed out waiting for the SQL job: " + emitted.get() + " of " + want);
            Thread.sleep(20);
        }
        // the barrier follows every row each source emitted, so the savepoint holds all of them
        Main.savepoint(c, SavepointFormatType.CANONICAL, target, 600);
        Main.cancel(c, "SQL job");
        return sg;
    }

    public static void run(MiniCluster mc, Path out) throws Exception {
        String only = System.getProperty("ckpt.sql.out");
        if (only != null) { // the bench's savepoint alone
            Path target = Path.of(only).toAbsolutePath();
            Files.createDirectories(target.getParent());
            savepoint(mc, target);
            return;
        }
        Path dir = out.resolve("sql");
        Files.createDirectories(dir);
        String name = "sql-hashmap-canonical";
        StreamGraph sg = savepoint(mc, dir.resolve(name));
        List<Map<String, Object>> ops = operators(sg);
        List<Object> orders = new ArrayList<>();
        for (int i = 0; i < rows(); i++) orders.add(orderRow(i));
        List<Object> cust = new ArrayList<>();
        for (String[] c : customers()) cust.add(List.of(c[0], c[1]));
        Map<String, Object> queries = new LinkedHashMap<>();
        for (String[] q : QUERIES) queries.put(q[0], q[1]);
        Map<String, Object> spa = SqlSpa.read(mc, dir.resolve(name), sg, ops);
        String groupUid = null;
        for (Map<String, Object> o : ops) if ("group".equals(o.get("kind"))) groupUid = (String) o.get("uid");
        spa.put("sql-connector", SqlConnector.group(dir.resolve(name), groupUid));
        Json.save(dir.resolve("sidecar.json"), Json.obj("savepoints", List.of(name), "queries", queries,
                "orders", orders, "customers", cust, "operators", ops, "expected", expected(), "spa", spa));
    }
}
