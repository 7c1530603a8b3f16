package ckpt.flink;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.state.JavaSerializer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.Collector;

import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Issue 40 section 3 (jser.bats): keyed state whose serializer is Flink's JavaSerializer
 * (org.apache.flink.runtime.state.JavaSerializer, whose snapshot ckpt types: each value one Java
 * serialization stream), written back by ckpt-merge --rows and restored by Flink.  A legacy source
 * (p 1) emits the keys k0..k5 once; the keyed operator "jser" (p 2, max parallelism 32) puts per key
 * a fixed value into value state "jv" (java.lang.String, java.lang.Integer or a {@link Point}) and
 * fixed elements into list state "jl" (java.lang.Long or java.lang.String; none for k5), both with
 * {@code new JavaSerializer<>()}.  Once every key is written, a canonical HashMap savepoint goes to
 * OUT/jser/jser-hashmap-canonical; jser/sidecar.json holds "contents" (per key what the job put:
 * {"jv": VALUE, "jl": [ELEMENTS]}, values rendered as ckpt-state(5) renders Java-serialized ones).
 *
 * <pre>
 *   java ckpt.flink.Main jser-restore OUT.json SP [--backend B] [OUT.json SP [--backend B]]...
 * </pre>
 *
 * restores the job from each SP (its source then emits one probe per key k0..k7, which reads and
 * changes nothing) and writes {"accepted", "keys": per key what Flink restored, in the shape of
 * "contents" (a key with no value and no element left out)} or {"accepted": false, "message"}.
 */
public final class JSerJob {
    static final int KEYS = 6;
    static final int PROBES = 8;
    static final String UID = "jser";
    /** The source emits probes (a restore) rather than the keys to write. */
    static volatile boolean probe;
    static final Map<String, Object> contents = new ConcurrentHashMap<>();
    static final Map<String, Object> restored = new ConcurrentHashMap<>();
    static final Map<String, Boolean> probed = new ConcurrentHashMap<>();

    private JSerJob() {}

    /** A serializable user class in state (ckpt reads its fields, writes changed ones back). */
    public static final class Point implements Serializable {
        private static final long serialVersionUID = 1L;
        final int x;
        final String label;

        Point(int x, String label) {
            this.x = x;
            this.label = label;
        }
    }

    /** What key k holds: [jv, jl elements...]. */
    static List<Serializable> fixed(String k) {
        switch (k) {
            case "k0": return List.of("alpha", 1L, 2L, 3L);
            case "k1": return List.of(7, "x", "y");
            case "k2": return List.of("béta", 10L);
            case "k3": return List.of(-5, 100L, 200L);
            case "k4": return List.of(new Point(3, "p"), "only");
            default: return List.of(42);
        }
    }

    static Object render(Object v) {
        if (v instanceof Point) return Json.obj("class", Point.class.getName(), "x", ((Point) v).x, "label", ((Point) v).label);
        return v;
    }

    public static final class Src extends LegacySource<String> {
        private volatile boolean running = true;

        @Override
        protected void produce(Out<String> out) throws Exception {
            for (int i = 0; i < (probe ? PROBES : KEYS) && running; i++) out.emit("k" + i);
            while (running) Thread.sleep(20);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    public static final class Fn extends KeyedProcessFunction<String, String, String> {
        private transient ValueState<Serializable> jv;
        private transient ListState<Serializable> jl;

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            jv = getRuntimeContext().getState(new ValueStateDescriptor<>("jv", new JavaSerializer<Serializable>()));
            jl = getRuntimeContext().getListState(new ListStateDescriptor<>("jl", new JavaSerializer<Serializable>()));
        }

        @Override
        public void processElement(String k, Context ctx, Collector<String> out) throws Exception {
            if (probe) {
                Map<String, Object> r = new TreeMap<>();
                if (jv.value() != null) r.put("jv", render(jv.value()));
                List<Object> l = new ArrayList<>();
                Iterable<Serializable> it = jl.get();
                if (it != null) for (Serializable e : it) l.add(render(e));
                if (!l.isEmpty()) r.put("jl", l);
                if (!r.isEmpty()) restored.put(k, r);
                probed.put(k, true);
                return;
            }
            List<Serializable> f = fixed(k);
            jv.update(f.get(0));
            List<Object> l = new ArrayList<>();
            for (Serializable e : f.subList(1, f.size())) {
                jl.add(e);
                l.add(render(e));
            }
            Map<String, Object> r = new TreeMap<>();
            r.put("jv", render(f.get(0)));
            if (!l.isEmpty()) r.put("jl", l);
            contents.put(k, r);
        }
    }

    static StreamGraph graph(Configuration c) {
        StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList());
        env.setMaxParallelism(StateJob.MAX_PARALLELISM);
        env.addSource(new Src(), "jser-src", Types.STRING).uid("jser-src").name("jser-src").setParallelism(1)
                .keyBy(k -> k, Types.STRING)
                .process(new Fn()).uid(UID).name(UID).setParallelism(2)
                .sinkTo(new DiscardingSink<>()).uid("jser-sink").name("jser-sink").setParallelism(1);
        StreamGraph sg = env.getStreamGraph();
        sg.setJobName("ckpt-jser");
        return sg;
    }

    static Configuration conf(String backend) {
        Configuration c = Main.jobConf("jser", backend);
        c.set(ConfigOptions.key("restart-strategy.type").stringType().noDefaultValue(), "none");
        return c;
    }

    static JobClient submit(Configuration c) throws Exception {
        return new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList()).executeAsync(graph(c));
    }

    /** The harness's run: OUT/jser/jser-hashmap-canonical and OUT/jser/sidecar.json. */
    static void run(Path out) throws Exception {
        long t0 = System.nanoTime();
        Path dir = out.resolve("jser");
        Files.createDirectories(dir);
        probe = false;
        contents.clear();
        Configuration c = conf("hashmap");
        StreamGraph sg = graph(c);
        Map<String, Object> job = Main.graph(sg);
        JobClient client = submit(c);
        Path sp;
        try {
            Main.waitFor("every key of the jser job written", () -> contents.size() == KEYS);
            sp = Main.savepoint(client, SavepointFormatType.CANONICAL, dir.resolve("jser-hashmap-canonical"));
        } finally {
            client.cancel().get(60, TimeUnit.SECONDS);
        }
        Files.deleteIfExists(dir.resolve("tmp"));
        Json.save(dir.resolve("sidecar.json"), Json.obj("artifact", "jser-hashmap-canonical", "backend", "hashmap",
                "path", out.relativize(sp).toString(), "uid", UID, "states", List.of("jv", "jl"),
                "serializer", JavaSerializer.class.getName(), "contents", new TreeMap<>(contents),
                "metadata", Meta.read(sp.resolve("_metadata")), "job", job));
        System.out.println("flink jser: savepoint in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }

    static boolean failed(JobClient job) {
        try {
            return job.getJobStatus().get(10, TimeUnit.SECONDS).isGloballyTerminalState();
        } catch (Exception e) {
            return true;
        }
    }

    static int restore(String[] args) throws Exception {
        Main.out = Files.createTempDirectory("ckpt-jser-restore");
        Main.startCluster();
        probe = true;
        try {
            for (int i = 1; i < args.length; ) {
                if (i + 1 >= args.length) {
                    System.err.println("usage: ckpt.flink.Main jser-restore OUT.json SP [--backend B]...");
                    return 2;
                }
                Path out = Path.of(args[i]), dir = Path.of(args[i + 1]).toAbsolutePath();
                String backend = "hashmap";
                i += 2;
                if (i + 1 < args.length && args[i].equals("--backend")) {
                    backend = args[i + 1];
                    i += 2;
                }
                restored.clear();
                probed.clear();
                Configuration c = conf(backend);
                c.set(StateRecoveryOptions.SAVEPOINT_PATH, dir.toUri().toString());
                Map<String, Object> r = new TreeMap<>();
                JobClient job = null;
                try {
                    job = submit(c);
                    JobClient j = job;
                    Main.waitFor("every probe read", () -> probed.size() == PROBES || failed(j));
                    r.put("accepted", probed.size() == PROBES);
                    r.put("backend", backend);
                    r.put("keys", new TreeMap<>(restored));
                    if (probed.size() != PROBES)
                        r.put("message", String.valueOf(job.getJobExecutionResult().handle((x, e) -> e).get(60, TimeUnit.SECONDS)));
                } catch (Exception e) {
                    r.put("accepted", false);
                    r.put("message", String.valueOf(e));
                }
                try {
                    if (job != null && !failed(job)) job.cancel().get(60, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // already ended
                }
                Json.save(out, r);
            }
        } finally {
            Main.mc.close();
            org.apache.flink.util.FileUtils.deleteDirectory(Main.out.toFile());
        }
        return 0;
    }
}
