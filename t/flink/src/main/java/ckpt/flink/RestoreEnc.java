package ckpt.flink;

import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.Collector;
import org.apache.flink.util.FileUtils;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Flink restores the user-type and SQL savepoints that ckpt-merge --rows wrote (t/flink/restoreenc.bats),
 * one MiniCluster for all requests:
 *
 * <pre>
 *   java ckpt.flink.Main restore-types OUT.json SAVEPOINT_DIR [--backend hashmap|rocksdb] [--keys K,K,...] [OUT.json ...]...
 *   java ckpt.flink.Main restore-sql OUT.json SAVEPOINT_DIR [--parallelism P] [--max-parallelism N]
 * </pre>
 *
 * restore-types: TypesJob (uids types-src and types, parallelism 1, max parallelism 32, its
 * serialization config) restored from SAVEPOINT_DIR on the backend (default hashmap); its source emits
 * each key of --keys (default k0..k9) once, and the keyed operator reads every state of that key and
 * records it, rendered as the harness renders the job's contents (TypesJob.render: ckpt-state(5)'s
 * words).  OUT.json: "accepted" true and "keys" {KEY: {"pojo", "pet", "specific", "generic", "kryo"}},
 * each null when the key has none; or "accepted" false with Flink's "message" and "causes".
 *
 * restore-sql: SqlJob's graph (its SQL operators at parallelism P, default 1, max parallelism N,
 * default 32: SqlJob.build) restored from SAVEPOINT_DIR (HashMap: every value deserialized by
 * Flink's own serializers at the restore), its sources emitting nothing; once every task runs, a
 * canonical savepoint of the restored job goes to OUT.json's name without .json (OUT.next/), and the
 * State Processor API reads it (SqlSpa: the sidecar's "spa").  OUT.json: "accepted" true, "next" (the
 * savepoint's path), "spa"; or "accepted" false with "message" and "causes".  One SQL restore a JVM:
 * Flink 1.20's planner numbers the operators of a second job on from the first's, so their uids
 * (table.exec.uid.generation ALWAYS: "5_group-aggregate") would not be the savepoint's.
 * Exit 0 when every OUT.json was written, 2 on a bad command line.
 */
final class RestoreEnc {
    private RestoreEnc() {}

    /** What the probing operator read, per key. */
    static final Map<String, Map<String, Object>> read = new ConcurrentHashMap<>();

    static int usage(String why) {
        System.err.println("ckpt.flink.Main restore-types|restore-sql: " + why);
        System.err.println("usage: ckpt.flink.Main restore-types OUT.json SAVEPOINT_DIR [--backend hashmap|rocksdb] [--keys K,...]"
                + " [OUT.json SAVEPOINT_DIR [...]]...");
        System.err.println("       ckpt.flink.Main restore-sql OUT.json SAVEPOINT_DIR [--parallelism P] [--max-parallelism N]");
        return 2;
    }

    static final class Request {
        Path out;
        Path dir;
        String backend = "hashmap";
        List<String> keys = new ArrayList<>();
        int parallelism = 1;
        int maxParallelism = StateJob.MAX_PARALLELISM;
    }

    static int main(String[] args) throws Exception {
        boolean sql = args[0].equals("restore-sql");
        List<Request> reqs = new ArrayList<>();
        Request cur = null;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                if (i + 1 >= args.length) return usage(a + ": no SAVEPOINT_DIR");
                cur = new Request();
                cur.out = Paths.get(a).toAbsolutePath();
                cur.dir = Paths.get(args[++i]).toAbsolutePath();
                for (int k = 0; k < 10; k++) cur.keys.add("k" + k);
                reqs.add(cur);
                continue;
            }
            if (cur == null) return usage(a + " before OUT.json SAVEPOINT_DIR");
            if (i + 1 >= args.length) return usage(a + ": no value");
            String v = args[++i];
            if (sql && a.equals("--parallelism") && v.matches("[1-9][0-9]{0,4}")) cur.parallelism = Integer.parseInt(v);
            else if (sql && a.equals("--max-parallelism") && v.matches("[1-9][0-9]{0,4}")) cur.maxParallelism = Integer.parseInt(v);
            else if (sql) return usage("unknown option " + a);
            else if (a.equals("--backend") && v.matches("hashmap|rocksdb")) cur.backend = v;
            else if (a.equals("--keys") && !v.isEmpty()) cur.keys = Arrays.asList(v.split(","));
            else return usage("bad option " + a + " " + v);
        }
        if (reqs.isEmpty()) return usage("nothing to restore");
        if (sql && reqs.size() > 1) return usage("one SQL restore a JVM (1.20's planner numbers a second job's uids on)");
        Main.out = Files.createTempDirectory("ckpt-flink-restore");
        Main.startCluster();
        try {
            for (Request r : reqs) {
                long t0 = System.nanoTime();
                Map<String, Object> res = new LinkedHashMap<>();
                res.put("savepoint", r.dir.toString());
                try {
                    res.putAll(sql ? sql(r) : types(r));
                    res.put("accepted", true);
                } catch (Main.RestoreFailed e) {
                    res.put("accepted", false);
                    res.put("message", Restore.message(e.getCause()));
                    res.put("causes", Restore.causes(e.getCause()));
                }
                Json.save(r.out, res);
                System.out.println(r.out + ": " + (Boolean.TRUE.equals(res.get("accepted")) ? "restored" : "refused")
                        + " in " + (System.nanoTime() - t0) / 1_000_000L + " ms");
            }
        } finally {
            Main.mc.close();
            FileUtils.deleteDirectory(Main.out.toFile());
        }
        return 0;
    }

    // ---------------------------------------------------------------- the types job

    /** Emits its keys once, then idles until cancelled. */
    public static final class Keys extends LegacySource<String> implements StateJob.Cancellable {
        private final List<String> keys;
        private volatile boolean running = true;

        Keys(List<String> keys) {
            this.keys = new ArrayList<>(keys);
        }

        public boolean running() {
            return running;
        }

        @Override
        protected void produce(Out<String> out) throws Exception {
            for (String k : keys) out.emit(k);
            StateJob.idle(this);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    /** Reads every state of each key it is given, writes nothing. */
    public static final class Probe extends KeyedProcessFunction<String, String, String> {
        private transient TypesJob.States st;

        @Override
        public void processElement(String key, Context ctx, Collector<String> out) throws Exception {
            if (st == null) st = new TypesJob.States(getRuntimeContext());
            GenericRecord g = st.gen.value();
            TypesJob.Opaque o = st.kryo.value();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("pojo", TypesJob.pojo(st.pojo.value()));
            m.put("pet", TypesJob.pojo(st.pet.value()));
            m.put("specific", st.spec.value() == null ? null : TypesJob.avro(st.spec.value(), AvroSpec.SCHEMA$));
            m.put("generic", g == null ? null : TypesJob.avro(g, g.getSchema()));
            m.put("kryo", o == null ? null : TypesJob.Opaque.class.getName());
            read.put(key, m);
        }
    }

    static Configuration restoring(Configuration c) {
        c.set(org.apache.flink.configuration.ConfigOptions.key("restart-strategy.type").stringType().noDefaultValue(), "none");
        return c;
    }

    static Map<String, Object> types(Request q) throws Exception {
        read.clear();
        StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, restoring(TypesJob.conf(q.backend)), 1,
                Collections.emptyList(), Collections.emptyList());
        env.setMaxParallelism(32);
        env.addSource(new Keys(q.keys)).uid("types-src").name("types-src").returns(Types.STRING)
                .keyBy(x -> x, Types.STRING).process(new Probe()).uid("types").name("types").returns(Types.STRING);
        StreamGraph sg = env.getStreamGraph();
        sg.setJobName("ckpt-types-restore");
        sg.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(q.dir.toUri().toString(), false));
        JobClient c = submit(env, sg);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (read.size() < q.keys.size()) {
            if (failed(c)) throw new Main.RestoreFailed("restore of " + q.dir + " failed", why(c));
            if (System.nanoTime() > end) {
                Main.cancel(c, "types restore");
                throw new Main.RestoreFailed("restore of " + q.dir + " failed",
                        new IllegalStateException("timed out: read " + read.size() + " of " + q.keys.size() + " keys"));
            }
            Thread.sleep(20);
        }
        Main.cancel(c, "types restore");
        return Json.obj("backend", q.backend, "keys", new TreeMap<>(read));
    }

    // ---------------------------------------------------------------- the SQL job

    static Map<String, Object> sql(Request q) throws Exception {
        Ctl.reset();
        Ctl.emit = false;
        try {
            StreamGraph sg = SqlJob.build(Main.mc, q.parallelism, q.maxParallelism);
            sg.setJobName("ckpt-sql-restore");
            sg.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(q.dir.toUri().toString(), false));
            JobClient c = submit(new TestStreamEnvironment(Main.mc, restoring(SqlJob.conf()), 1,
                    Collections.emptyList(), Collections.emptyList()), sg);
            Path next = Paths.get(q.out.toString().replaceFirst("\\.json$", "") + ".next");
            if (Files.exists(next)) FileUtils.deleteDirectory(next.toFile());
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            for (JobStatus st = c.getJobStatus().get(10, TimeUnit.SECONDS); st != JobStatus.RUNNING; st = c.getJobStatus().get(10, TimeUnit.SECONDS)) {
                if (st.isGloballyTerminalState()) throw new Main.RestoreFailed("restore of " + q.dir + " failed", why(c));
                if (System.nanoTime() > end) throw new IllegalStateException("timed out waiting for the SQL restore to run: " + st);
                Thread.sleep(20);
            }
            for (int tries = 0;; tries++) { // 1.20 reports RUNNING while its JobMaster still initializes
                try {
                    Main.savepoint(c, SavepointFormatType.CANONICAL, next, 120);
                    break;
                } catch (Exception e) {
                    if (failed(c)) throw new Main.RestoreFailed("restore of " + q.dir + " failed", why(c));
                    if (tries >= 600 || !String.valueOf(e.getMessage()).contains("JobManager is initializing")) throw e;
                    Thread.sleep(100);
                }
            }
            Main.cancel(c, "SQL restore");
            return Json.obj("next", next.toString(), "spa", SqlSpa.read(Main.mc, next, sg, SqlJob.operators(sg)));
        } finally {
            Ctl.reset();
        }
    }

    // ---------------------------------------------------------------- both

    static JobClient submit(StreamExecutionEnvironment env, StreamGraph sg) throws Exception {
        try {
            return env.executeAsync(sg);
        } catch (Exception e) {
            throw new Main.RestoreFailed("Flink refused the job", e);
        }
    }

    static boolean failed(JobClient c) throws Exception {
        JobStatus s = c.getJobStatus().get(10, TimeUnit.SECONDS);
        return s.isGloballyTerminalState();
    }

    static Throwable why(JobClient c) {
        try {
            c.getJobExecutionResult().get(60, TimeUnit.SECONDS);
            return new IllegalStateException("the job ended without reading every key");
        } catch (Exception e) {
            return e;
        }
    }
}
