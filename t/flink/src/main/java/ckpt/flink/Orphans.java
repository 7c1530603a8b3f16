package ckpt.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.Collector;

import java.io.DataInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Issue 29 (--orphans) and issue 26 (an incremental chain with compaction): a RocksDB incremental
 * job, three checkpoints retained, made to leave files behind as Flink does in the field (an expired
 * checkpoint, a task failed in its snapshot, the task manager terminated during a snapshot), and a
 * checkpoint held in progress while its directory is copied (see README, "Orphans").
 */
public final class Orphans {
    static final int KEYS = 64;
    static final int PAD = 200;
    /** Rounds the source is to have emitted; each round is one record per key. */
    static volatile int target = 0;
    /** Restore probe: the restored source emits one probe (-1 - key) per key. */
    static volatile boolean probe = false;
    /** Keyed subtask 1's snapshot: 0 normal, 1 slow (SLOW_MS), 2 throws, 3 held until released. */
    static volatile int snapshotMode = 0;
    static volatile boolean held = false;
    static final long SLOW_MS = 4500;
    static final Map<Long, Long> lastRound = new ConcurrentHashMap<>();
    static volatile int restoredRounds = -1;
    static final Map<Long, Long> probed = new ConcurrentHashMap<>();
    /** Per checkpoint id, the rounds the source had emitted (its state). */
    static final Map<Long, Integer> roundsAt = new ConcurrentHashMap<>();

    static final class Src extends LegacySource<Long> implements CheckpointedFunction {
        private volatile boolean running = true;
        private transient ListState<Integer> state;
        private int rounds;

        @Override
        protected void produce(Out<Long> out) throws Exception {
            if (probe) for (long k = 0; k < KEYS; k++) out.emit(-1 - k);
            while (running) {
                if (!probe && rounds < target) {
                    synchronized (out.lock()) {
                        rounds++;
                        for (long k = 0; k < KEYS; k++) out.emit(k * 1000 + rounds);
                    }
                } else {
                    Thread.sleep(5);
                }
            }
        }

        @Override
        public void cancel() {
            running = false;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            state.update(List.of(rounds));
            roundsAt.put(ctx.getCheckpointId(), rounds);
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) throws Exception {
            state = ctx.getOperatorStateStore().getListState(new ListStateDescriptor<>("rounds", Types.INT));
            rounds = 0;
            for (Integer r : state.get()) rounds = r;
            restoredRounds = rounds;
        }
    }

    static String payload(long key, long round) {
        StringBuilder b = new StringBuilder("k" + key + "r" + round + ":");
        while (b.length() < PAD) b.append((char) ('a' + (b.length() + key + round) % 26));
        return b.toString();
    }

    static final class Count extends KeyedProcessFunction<Long, Long, Long> implements CheckpointedFunction {
        private transient ValueState<Long> count;
        private transient ValueState<String> text;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            text = getRuntimeContext().getState(new ValueStateDescriptor<>("payload", Types.STRING));
        }

        @Override
        public void processElement(Long v, Context ctx, Collector<Long> out) throws Exception {
            if (v < 0) {
                probed.put(-1 - v, count.value() == null ? -1 : count.value());
                return;
            }
            long key = v / 1000, round = v % 1000;
            count.update(count.value() == null ? 1 : count.value() + 1);
            text.update(payload(key, round));
            lastRound.put(key, round);
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            if (getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() != 1) return;
            int mode = snapshotMode;
            if (mode == 1) Thread.sleep(SLOW_MS);
            if (mode == 2) {
                snapshotMode = 0;
                throw new java.io.IOException("ckpt harness: task failed during its snapshot");
            }
            if (mode == 3) {
                held = true;
                while (snapshotMode == 3) Thread.sleep(10);
                held = false;
            }
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) {
        }
    }

    static Configuration conf(Path dir) {
        Configuration c = Main.jobConf("orphans", "rocksdb");
        c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, dir.toUri().toString());
        c.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        c.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 3);
        c.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
        c.set(CheckpointingOptions.CHECKPOINTING_TIMEOUT, Duration.ofMillis(3000));
        c.set(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER, 100);
        c.set(ConfigOptions.key("restart-strategy.type").stringType().noDefaultValue(), "fixed-delay");
        c.set(ConfigOptions.key("restart-strategy.fixed-delay.attempts").intType().noDefaultValue(), 5);
        c.set(ConfigOptions.key("restart-strategy.fixed-delay.delay").stringType().noDefaultValue(), "200 ms");
        // compaction between checkpoints: every checkpoint flushes one L0 file per column family,
        // two of them start a compaction
        c.set(ConfigOptions.key("state.backend.rocksdb.compaction.level.target-file-size-base").stringType()
                .noDefaultValue(), "64kb");
        return c;
    }

    static JobClient submit(Configuration c, int p) throws Exception {
        StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList());
        env.setMaxParallelism(StateJob.MAX_PARALLELISM);
        env.addSource(new Src(), "src", Types.LONG).uid("src").name("src").setParallelism(1)
                .keyBy(v -> v < 0 ? -1 - v : v / 1000, Types.LONG)
                .process(new Count()).uid("keyed").name("keyed").setParallelism(p)
                .sinkTo(new DiscardingSink<>()).uid("sink").name("sink").setParallelism(1);
        StreamGraph sg = env.getStreamGraph();
        sg.setJobName("ckpt-orphans");
        jobDesc = Main.graph(sg);
        return env.executeAsync(sg);
    }

    static Map<String, Object> jobDesc;

    static void drained(int rounds) throws Exception {
        target = rounds;
        Main.waitFor("round " + rounds + " through", () -> {
            if (lastRound.size() < KEYS) return false;
            for (long r : lastRound.values()) if (r != rounds) return false;
            return true;
        });
    }

    /** The job's record of checkpoint id: what the state holds when the source had emitted its rounds. */
    static Map<String, Object> contents(int rounds, int p) {
        Map<String, Object> c = new TreeMap<>();
        c.put("src/0", Json.obj("rounds", List.of(rounds)));
        for (int i = 0; i < p; i++) c.put("keyed/" + i, Json.obj("keys", new TreeMap<String, Object>()));
        if (rounds == 0) return c;
        for (long k = 0; k < KEYS; k++) {
            int g = KeyGroupRangeAssignment.assignToKeyGroup(k, StateJob.MAX_PARALLELISM);
            int i = KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup(StateJob.MAX_PARALLELISM, p, g);
            @SuppressWarnings("unchecked")
            Map<String, Object> keys = (Map<String, Object>) ((Map<String, Object>) c.get("keyed/" + i)).get("keys");
            keys.put(Long.toString(k), Json.obj("key_group", g, "count", rounds, "payload", payload(k, rounds)));
        }
        for (int i = 0; i < p; i++) {
            if (((Map<?, ?>) ((Map<?, ?>) c.get("keyed/" + i)).get("keys")).isEmpty()) c.remove("keyed/" + i);
        }
        return c;
    }

    static Set<String> files(Path dir) throws Exception {
        Set<String> s = new TreeSet<>();
        if (!Files.exists(dir)) return s;
        try (Stream<Path> w = Files.walk(dir)) {
            w.filter(Files::isRegularFile).forEach(f -> s.add(dir.relativize(f).toString()));
        }
        return s;
    }

    /** Every file a _metadata names (its handles' file paths), local paths. */
    static Set<String> referenced(Path metadata) throws Exception {
        CheckpointMetadata md;
        try (InputStream in = Files.newInputStream(metadata)) {
            md = Checkpoints.loadCheckpointMetadata(new DataInputStream(in), Orphans.class.getClassLoader(),
                    metadata.getParent().toString());
        }
        Set<String> s = new TreeSet<>();
        for (OperatorState os : md.getOperatorStates()) {
            for (OperatorSubtaskState st : os.getStates()) {
                for (OperatorStateHandle h : st.getManagedOperatorState()) stream(h.getDelegateStateHandle(), s);
                for (OperatorStateHandle h : st.getRawOperatorState()) stream(h.getDelegateStateHandle(), s);
                for (KeyedStateHandle h : st.getManagedKeyedState()) keyed(h, s);
                for (KeyedStateHandle h : st.getRawKeyedState()) keyed(h, s);
            }
        }
        return s;
    }

    static void keyed(KeyedStateHandle h, Set<String> s) {
        if (h instanceof KeyGroupsStateHandle) {
            stream(((KeyGroupsStateHandle) h).getDelegateStateHandle(), s);
        } else if (h instanceof IncrementalRemoteKeyedStateHandle) {
            IncrementalRemoteKeyedStateHandle k = (IncrementalRemoteKeyedStateHandle) h;
            stream(k.getMetaDataStateHandle(), s);
            k.getSharedState().forEach(x -> stream(x.getHandle(), s));
            k.getPrivateState().forEach(x -> stream(x.getHandle(), s));
        } else {
            throw new IllegalStateException("orphans: unexpected keyed handle " + h.getClass());
        }
    }

    static void stream(StreamStateHandle h, Set<String> s) {
        if (h instanceof FileStateHandle) {
            s.add(Main.local(((FileStateHandle) h).getFilePath().toUri().toString()).toString());
        }
    }

    static void copy(Path from, Path to) throws Exception {
        try (Stream<Path> w = Files.walk(from)) {
            for (Path f : (Iterable<Path>) w::iterator) {
                Path t = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(t);
                } else if (Files.isRegularFile(f)) {
                    try {
                        Files.copy(f, t, StandardCopyOption.COPY_ATTRIBUTES);
                    } catch (java.nio.file.NoSuchFileException e) {
                        // deleted by Flink while copying: not there
                    }
                }
            }
        }
        // directories' times after their files
        try (Stream<Path> w = Files.walk(from)) {
            for (Path f : (Iterable<Path>) w::iterator) {
                Path t = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f) && Files.exists(t)) {
                    try {
                        Files.setLastModifiedTime(t, Files.getLastModifiedTime(f));
                    } catch (java.nio.file.NoSuchFileException e) {
                        // gone
                    }
                }
            }
        }
    }

    static final int P = 2;

    /** Checkpoint the job, expected to complete: the id, with the sidecar of the chain's step. */
    static long checkpoint(JobClient job, int rounds) throws Exception {
        String ptr = Main.trigger(job.getJobID());
        Path dir = Main.local(ptr);
        return Long.parseLong(dir.getFileName().toString().substring(4));
    }

    /** Trigger a checkpoint expected to fail; Flink's message. */
    static String failing(JobClient job) {
        try {
            Main.mc.triggerCheckpoint(job.getJobID()).get(60, TimeUnit.SECONDS);
            return null;
        } catch (Exception e) {
            Throwable t = e;
            while (t.getCause() != null) t = t.getCause();
            return String.valueOf(t);
        }
    }

    static void run(Path out) throws Exception {
        long t0 = System.nanoTime();
        Path root = out.resolve("orphans");
        Path cps = root.resolve("checkpoints");
        Files.createDirectories(cps);
        lastRound.clear();
        roundsAt.clear();
        target = 0;
        probe = false;
        snapshotMode = 0;
        JobClient job = submit(conf(cps), P);
        String jobId = job.getJobID().toString();
        Path jobDir = cps.resolve(jobId);
        List<Object> steps = new ArrayList<>();
        Map<String, String> appeared = new TreeMap<>();
        Set<String> seen = new TreeSet<>();
        java.util.function.Consumer<String> mark = (String what) -> {
            try {
                for (String f : files(cps)) if (seen.add(f)) appeared.put(f, what);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
        List<Long> chain = new ArrayList<>();
        int round = 0;
        // an incremental chain: a round of writes, a checkpoint, four times
        for (int i = 0; i < 4; i++) {
            drained(++round);
            chain.add(checkpoint(job, round));
            steps.add(Json.obj("step", "checkpoint", "id", chain.get(chain.size() - 1), "rounds", round));
            mark.accept("checkpoint " + chain.get(chain.size() - 1));
        }
        // expired: keyed subtask 1 snapshots for longer than the checkpoint timeout
        drained(++round);
        snapshotMode = 1;
        steps.add(Json.obj("step", "expired", "message", failing(job)));
        Thread.sleep(SLOW_MS + 500);
        snapshotMode = 0;
        mark.accept("expired");
        // a task failed during its snapshot: the job restarts from its latest checkpoint
        drained(++round);
        snapshotMode = 2;
        steps.add(Json.obj("step", "task-failed", "message", failing(job)));
        Main.waitFor("the job running again", () -> {
            try {
                return job.getJobStatus().get(10, TimeUnit.SECONDS) == org.apache.flink.api.common.JobStatus.RUNNING;
            } catch (Exception e) {
                return false;
            }
        });
        lastRound.clear();
        drained(round);
        chain.add(checkpoint(job, round));
        steps.add(Json.obj("step", "checkpoint", "id", chain.get(chain.size() - 1), "rounds", round));
        mark.accept("task-failed");
        // the task manager terminated while keyed subtask 1 is in its snapshot (subtask 0 has written)
        drained(++round);
        snapshotMode = 3;
        java.util.concurrent.CompletableFuture<String> tm = Main.mc.triggerCheckpoint(job.getJobID());
        Main.waitFor("keyed subtask 1 held in its snapshot", () -> held);
        Thread.sleep(300);
        Main.mc.terminateTaskManager(0).get(60, TimeUnit.SECONDS);
        snapshotMode = 0;
        Main.mc.startTaskManager();
        String tmMessage;
        try {
            tm.get(60, TimeUnit.SECONDS);
            tmMessage = null;
        } catch (Exception e) {
            Throwable t = e;
            while (t.getCause() != null) t = t.getCause();
            tmMessage = String.valueOf(t);
        }
        steps.add(Json.obj("step", "task-manager-terminated", "message", tmMessage));
        lastRound.clear();
        Main.waitFor("the job running again", () -> {
            try {
                return job.getJobStatus().get(10, TimeUnit.SECONDS) == org.apache.flink.api.common.JobStatus.RUNNING;
            } catch (Exception e) {
                return false;
            }
        });
        drained(round);
        mark.accept("task-manager-terminated");
        // three more, so that the leaks lie below the newest complete checkpoint and three are retained
        for (int i = 0; i < 3; i++) {
            drained(++round);
            chain.add(checkpoint(job, round));
            steps.add(Json.obj("step", "checkpoint", "id", chain.get(chain.size() - 1), "rounds", round));
            mark.accept("checkpoint " + chain.get(chain.size() - 1));
        }
        // a checkpoint in progress: keyed subtask 1 held in its snapshot while the directory is copied
        drained(++round);
        Set<String> beforeHeld = files(cps);
        snapshotMode = 3;
        java.util.concurrent.CompletableFuture<String> inProgress = Main.mc.triggerCheckpoint(job.getJobID());
        Main.waitFor("keyed subtask 1 held in its snapshot", () -> held);
        Thread.sleep(500);
        Path copy = root.resolve("copy");
        copy(cps, copy);
        snapshotMode = 0;
        inProgress.get(60, TimeUnit.SECONDS);
        job.cancel().get(60, TimeUnit.SECONDS);
        Main.waitFor("orphans job cancelled", () -> {
            try {
                return job.getJobStatus().get(10, TimeUnit.SECONDS).isGloballyTerminalState();
            } catch (Exception e) {
                return true;
            }
        });
        org.apache.flink.util.FileUtils.deleteDirectory(cps.toFile());
        Files.move(copy, cps);

        // the oracle: files there minus what the complete checkpoints' _metadata name, Flink's own reader
        Set<String> present = files(cps);
        Set<Long> complete = new TreeSet<>();
        Set<String> named = new TreeSet<>();
        for (String f : present) {
            // every _metadata there is a complete checkpoint's (the held one has none in the copy)
            if (!f.endsWith("/_metadata")) continue;
            String chk = Path.of(f).getParent().getFileName().toString();
            long id = Long.parseLong(chk.substring(4));
            complete.add(id);
            named.add(f);
            for (String p : referenced(cps.resolve(f))) named.add(cps.relativize(Path.of(p)).toString());
        }
        Set<String> heldFiles = new TreeSet<>(present);
        heldFiles.removeAll(beforeHeld);
        List<Object> leaked = new ArrayList<>();
        for (String f : present) {
            if (named.contains(f) || heldFiles.contains(f) || f.contains("/taskowned/")) continue;
            leaked.add(Json.obj("path", f, "size", Files.size(cps.resolve(f)), "appeared", appeared.get(f)));
        }
        List<Object> retained = new ArrayList<>();
        for (long id : complete) {
            String name = "orphans-chk-" + id;
            int rounds = roundsAt.get(id);
            Main.artifact("rocksdb", jobId, jobDesc, name, "checkpoint", jobDir.resolve("chk-" + id), contents(rounds, P),
                    "orphans job: incremental chain, retained", false);
            retained.add(Json.obj("id", id, "path", Main.out.relativize(jobDir.resolve("chk-" + id)).toString(),
                    "sidecar", "sidecars/" + name + ".json", "rounds", rounds));
        }
        // issue 26: a checkpoint of the job rescaled (2 -> 3) from its latest checkpoint, whose
        // restored RocksDB files hold key groups beyond the new subtasks' ranges
        long latest = Collections.max(complete);
        int latestRounds = roundsAt.get(latest);
        probe = true;
        probed.clear();
        Configuration rc = conf(root.resolve("rescaled"));
        rc.set(StateRecoveryOptions.SAVEPOINT_PATH, jobDir.resolve("chk-" + latest).toUri().toString());
        JobClient rj = submit(rc, 3);
        Main.waitFor("every key probed after rescaling", () -> probed.size() == KEYS);
        roundsAt.clear();
        String rptr = Main.trigger(rj.getJobID());
        Path rdir = Main.local(rptr);
        rj.cancel().get(60, TimeUnit.SECONDS);
        probe = false;
        Main.artifact("rocksdb", rj.getJobID().toString(), jobDesc, "orphans-rescaled", "checkpoint", rdir,
                contents(latestRounds, 3), "orphans job restored at parallelism 3 from its latest checkpoint, checkpointed", false);
        Map<String, Object> rescaled = Json.obj("path", Main.out.relativize(rdir).toString(), "from", latest,
                "sidecar", "sidecars/orphans-rescaled.json", "rounds", roundsAt.getOrDefault(
                        Long.parseLong(rdir.getFileName().toString().substring(4)), -1), "parallelism", 3);

        Main.orphans = Json.obj("rescaled", rescaled, "dir", Main.out.relativize(cps).toString(), "job_dir", Main.out.relativize(jobDir).toString(),
                "job_id", jobId, "retained", retained, "latest", latest,
                "in_progress", Json.obj("files", new ArrayList<>(heldFiles)),
                "leaked", leaked, "steps", steps, "keys", KEYS, "parallelism", P,
                "oracle", "files under dir minus those Checkpoints.loadCheckpointMetadata's handles name in each"
                        + " complete chk-N/_metadata (and the _metadata), minus the files that appeared after the held"
                        + " checkpoint was triggered, minus taskowned/",
                "seconds", (System.nanoTime() - t0) / 1_000_000_000L);
        Json.save(out.resolve("orphans").resolve("sidecar.json"), Main.orphans);
    }

    /**
     * ckpt.flink.Main orphans-restore OUT.json CHK_DIR...: restore the orphans job from each
     * checkpoint (probe mode: nothing new emitted) and write per checkpoint the restored count of
     * every key and the source's rounds.
     */
    static int restore(String[] args) throws Exception {
        Main.out = Files.createTempDirectory("ckpt-orphans-restore");
        Main.startCluster();
        List<Object> res = new ArrayList<>();
        try {
            for (int i = 2; i < args.length; i++) {
                Path dir = Path.of(args[i]).toAbsolutePath();
                probe = true;
                probed.clear();
                lastRound.clear();
                Configuration c = conf(Main.out.resolve("checkpoints"));
                c.set(StateRecoveryOptions.SAVEPOINT_PATH, dir.toUri().toString());
                c.set(ConfigOptions.key("restart-strategy.type").stringType().noDefaultValue(), "none");
                JobClient job = submit(c, P);
                Map<String, Object> r = Json.obj("path", args[i]);
                try {
                    Main.waitFor("every key probed", () -> {
                        try {
                            if (job.getJobStatus().get(10, TimeUnit.SECONDS) == org.apache.flink.api.common.JobStatus.FAILED)
                                return true;
                        } catch (Exception e) {
                            return true;
                        }
                        return probed.size() == KEYS;
                    });
                    r.put("accepted", probed.size() == KEYS);
                    r.put("rounds", restoredRounds);
                    Map<String, Object> counts = new TreeMap<>();
                    for (Map.Entry<Long, Long> e : probed.entrySet()) counts.put(e.getKey().toString(), e.getValue());
                    r.put("counts", counts);
                } catch (Exception e) {
                    r.put("accepted", false);
                    r.put("message", String.valueOf(e));
                }
                try {
                    job.cancel().get(60, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // already failed
                }
                res.add(r);
            }
        } finally {
            Main.mc.close();
            org.apache.flink.util.FileUtils.deleteDirectory(Main.out.toFile());
        }
        Json.save(Path.of(args[1]), Json.obj("restores", res));
        return 0;
    }
}
