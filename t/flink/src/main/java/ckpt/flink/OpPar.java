package ckpt.flink;

import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.Collector;

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
 * Issue 40 section 2 (oppar.bats): an operator holding operator state beside its keyed state, at a
 * new parallelism.  Its one keyed operator "op" (max parallelism 8) has keyed state ("count") and
 * operator state: list states "split-a" (idx + 2 elements a subtask) and "split-b" (2 idx + 1),
 * union state "union" (2 a subtask) and broadcast state "bcast" (a map of its own a subtask).
 *
 * <pre>
 *   java ckpt.flink.Main oppar-savepoint DIR P [--files]   a canonical HashMap savepoint at parallelism P
 *                                                          into DIR (--files: each stream a file of its own)
 *   java ckpt.flink.Main oppar-restore OUT.json DIR N [OUT.json DIR N]...
 * </pre>
 *
 * Each restore at parallelism N writes {"accepted", "reports": {SUBTASK: {STATE: elements in the order
 * Flink restored them; bcast: its entries}}} (every subtask's initializeState), or the message.
 */
public final class OpPar {
    static final int MAXP = 8;
    static final int RECORDS = 40;
    static final Map<Integer, Map<String, Object>> reports = new ConcurrentHashMap<>();
    static final Map<Integer, Boolean> seen = new ConcurrentHashMap<>();

    private OpPar() {}

    public static final class Src extends LegacySource<Long> {
        private volatile boolean running = true;

        @Override
        protected void produce(Out<Long> out) throws Exception {
            for (long i = 0; i < RECORDS && running; i++) out.emit(i);
            while (running) Thread.sleep(20);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    public static final class Fn extends KeyedProcessFunction<Long, Long, Long> implements CheckpointedFunction {
        private transient ValueState<Long> count;
        private transient ListState<String> a, b, union;
        private transient BroadcastState<String, Long> bcast;
        private int idx;

        @Override
        public void processElement(Long v, Context ctx, Collector<Long> out) throws Exception {
            Long c = count.value();
            count.update(c == null ? 1 : c + 1);
            seen.put(idx, true);
        }

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) throws Exception {
            idx = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            a = ctx.getOperatorStateStore().getListState(new ListStateDescriptor<>("split-a", Types.STRING));
            b = ctx.getOperatorStateStore().getListState(new ListStateDescriptor<>("split-b", Types.STRING));
            union = ctx.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>("union", Types.STRING));
            bcast = ctx.getOperatorStateStore().getBroadcastState(new MapStateDescriptor<>("bcast", Types.STRING, Types.LONG));
            if (!ctx.isRestored()) return;
            Map<String, Object> r = new TreeMap<>();
            r.put("split-a", list(a.get()));
            r.put("split-b", list(b.get()));
            r.put("union", list(union.get()));
            Map<String, Object> m = new TreeMap<>();
            for (Map.Entry<String, Long> e : bcast.entries()) m.put(e.getKey(), e.getValue());
            r.put("bcast", m);
            reports.put(idx, r);
        }

        static List<String> list(Iterable<String> it) {
            List<String> l = new ArrayList<>();
            for (String s : it) l.add(s);
            return l;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            List<String> l = new ArrayList<>();
            for (int j = 0; j < idx + 2; j++) l.add("a" + idx + ":" + j);
            a.update(l);
            l = new ArrayList<>();
            for (int j = 0; j < 2 * idx + 1; j++) l.add("b" + idx + ":" + j);
            b.update(l);
            union.update(List.of("u" + idx + ":0", "u" + idx + ":1"));
            bcast.clear();
            bcast.put("rule-" + idx, (long) idx);
            bcast.put("shared", 7L);
        }
    }

    static JobClient submit(Configuration c, int p) throws Exception {
        StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList());
        env.setMaxParallelism(MAXP);
        env.addSource(new Src(), "src", Types.LONG).uid("src").name("src").setParallelism(1)
                .keyBy(v -> v % 11, Types.LONG)
                .process(new Fn()).uid("op").name("op").setParallelism(p)
                .sinkTo(new DiscardingSink<>()).uid("sink").name("sink").setParallelism(1);
        return env.executeAsync("ckpt-oppar");
    }

    static Configuration conf() {
        Configuration c = Main.jobConf("oppar", "hashmap");
        c.set(ConfigOptions.key("restart-strategy.type").stringType().noDefaultValue(), "none");
        return c;
    }

    static boolean failed(JobClient job) {
        try {
            return job.getJobStatus().get(10, TimeUnit.SECONDS) == org.apache.flink.api.common.JobStatus.FAILED;
        } catch (Exception e) {
            return true;
        }
    }

    static int savepoint(String[] args) throws Exception {
        Path dir = Path.of(args[1]).toAbsolutePath();
        int p = Integer.parseInt(args[2]);
        Main.out = Files.createTempDirectory("ckpt-oppar");
        if (args.length > 3 && args[3].equals("--files")) Main.clusterExtra.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
        Main.startCluster();
        try {
            Configuration c = conf();
            if (args.length > 3) c.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
            JobClient job = submit(c, p);
            Main.waitFor("every subtask's records", () -> seen.size() == p || failed(job));
            if (seen.size() != p) throw new IllegalStateException("the job failed: " + job.getJobExecutionResult().handle((x, e) -> { if (e != null) e.printStackTrace(); return e; }).get());
            String sp = Main.triggerSavepoint(job.getJobID(), dir.toUri().toString(), SavepointFormatType.CANONICAL, 60);
            System.out.println(sp);
            job.cancel().get(60, TimeUnit.SECONDS);
        } finally {
            Main.mc.close();
            org.apache.flink.util.FileUtils.deleteDirectory(Main.out.toFile());
        }
        return 0;
    }

    static int restore(String[] args) throws Exception {
        Main.out = Files.createTempDirectory("ckpt-oppar-restore");
        Main.startCluster();
        try {
            for (int i = 1; i + 2 < args.length; i += 3) {
                Path out = Path.of(args[i]), dir = Path.of(args[i + 1]).toAbsolutePath();
                int n = Integer.parseInt(args[i + 2]);
                reports.clear();
                Configuration c = conf();
                c.set(StateRecoveryOptions.SAVEPOINT_PATH, dir.toUri().toString());
                Map<String, Object> r = new TreeMap<>();
                JobClient job = null;
                try {
                    job = submit(c, n);
                    JobClient j = job;
                    Main.waitFor("every subtask restored", () -> reports.size() == n || failed(j));
                    r.put("accepted", reports.size() == n);
                    Map<String, Object> rep = new TreeMap<>();
                    for (Map.Entry<Integer, Map<String, Object>> e : reports.entrySet()) rep.put(String.valueOf(e.getKey()), e.getValue());
                    r.put("reports", rep);
                } catch (Exception e) {
                    r.put("accepted", false);
                    r.put("message", String.valueOf(e));
                }
                try {
                    if (job != null) job.cancel().get(60, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // already failed
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
