package ckpt.flink;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.BatchExecutionOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.HighAvailabilityOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.highavailability.nonha.embedded.EmbeddedHaServicesWithLeadershipControl;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobType;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.jobmaster.event.ExecutionJobVertexInitializedEvent;
import org.apache.flink.runtime.jobmaster.event.ExecutionVertexFinishedEvent;
import org.apache.flink.runtime.jobmaster.event.ExecutionVertexResetEvent;
import org.apache.flink.runtime.jobmaster.event.FileSystemJobEventStore;
import org.apache.flink.runtime.jobmaster.event.JobEvent;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshot;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.TestingMiniCluster;
import org.apache.flink.runtime.minicluster.TestingMiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.GlobalStreamExchangeMode;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamingJobGraphGenerator;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The batch job with job recovery (FLIP-383): source -> Map -> (hash) Reduce -> Sink, every edge
 * blocking, on the adaptive batch scheduler with execution.batch.job-recovery.enabled.  Map
 * subtasks 2 and 3 are held until the JobMaster has lost and regained leadership (as Flink's
 * JMFailoverITCase does it), so the job event log (FileSystemJobEventStore's events.N under the HA
 * storage directory) is cut mid-run; the sidecar lists the event files, what was FINISHED at the
 * failure and every subtask attempt that ran, before and after it.
 */
final class Batch {
    private Batch() {}

    static final int SOURCE_P = 4, MAP_P = 4, REDUCE_P = 2, SINK_P = 2;
    static final List<Map<String, Object>> attempts = new CopyOnWriteArrayList<>();
    static final Set<String> held = ConcurrentHashMap.newKeySet();

    /** Records each attempt it opens; Map holds the subtasks in {@link #held}. */
    static final class Track extends AbstractStreamOperator<Long> implements OneInputStreamOperator<Long, Long> {
        private final String name;

        Track(String name) {
            this.name = name;
        }

        @Override
        public void open() throws Exception {
            super.open();
            attempts.add(Json.obj("vertex", name, "subtask", getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                    "attempt", getRuntimeContext().getTaskInfo().getAttemptNumber()));
        }

        @Override
        public void processElement(StreamRecord<Long> rec) throws Exception {
            while (held.contains(name + "/" + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask())) {
                Thread.sleep(10);
            }
            output.collect(rec);
        }
    }

    static void run(MiniCluster unused, Path out) throws Exception {
        Path dir = out.resolve("batch");
        Files.createDirectories(dir);
        attempts.clear();
        held.clear();
        held.add("Map/2");
        held.add("Map/3");
        held.add("Sink/0");
        held.add("Sink/1");
        listenToEventStore();
        ScheduledExecutorService exec = Executors.newSingleThreadScheduledExecutor();
        EmbeddedHaServicesWithLeadershipControl ha = new EmbeddedHaServicesWithLeadershipControl(exec);
        Configuration c = new Configuration();
        c.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
        c.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        c.set(RestOptions.ADDRESS, "127.0.0.1");
        c.set(RestOptions.BIND_PORT, "0");
        c.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("64m"));
        c.set(TaskManagerOptions.NETWORK_MEMORY_MIN, MemorySize.parse("32m"));
        c.set(TaskManagerOptions.NETWORK_MEMORY_MAX, MemorySize.parse("32m"));
        c.set(JobManagerOptions.SCHEDULER, JobManagerOptions.SchedulerType.AdaptiveBatch);
        c.set(BatchExecutionOptions.JOB_RECOVERY_ENABLED, true);
        c.set(BatchExecutionOptions.JOB_RECOVERY_SNAPSHOT_MIN_PAUSE, Duration.ZERO);
        c.set(BatchExecutionOptions.JOB_RECOVERY_PREVIOUS_WORKER_RECOVERY_TIMEOUT, Duration.ofSeconds(3));
        c.set(JobManagerOptions.EXECUTION_FAILOVER_STRATEGY, "region");
        c.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        c.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 10);
        c.set(HighAvailabilityOptions.HA_STORAGE_PATH, dir.resolve("ha").toString());
        c.set(CoreOptions.TMP_DIRS, dir.resolve("tmp").toString());
        TestingMiniCluster mc = TestingMiniCluster.newBuilder(TestingMiniClusterConfiguration.newBuilder()
                        .setConfiguration(c).setNumTaskManagers(1).setNumSlotsPerTaskManager(4).build())
                .setHighAvailabilityServicesSupplier(() -> ha).build();
        mc.start();
        try {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setRuntimeMode(RuntimeExecutionMode.BATCH);
            env.disableOperatorChaining();
            env.fromSequence(0, 3999).setParallelism(SOURCE_P).name("Source")
                    .transform("Map", Types.LONG, new Track("Map")).setParallelism(MAP_P)
                    .keyBy(v -> v % 20)
                    .transform("Reduce", Types.LONG, new Track("Reduce")).setParallelism(REDUCE_P)
                    .transform("Sink", Types.LONG, new Track("Sink")).setParallelism(SINK_P);
            StreamGraph sg = env.getStreamGraph();
            sg.setGlobalStreamExchangeMode(GlobalStreamExchangeMode.ALL_EDGES_BLOCKING);
            sg.setJobType(JobType.BATCH);
            sg.setJobName("ckpt-batch-recovery");
            JobGraph jg = StreamingJobGraphGenerator.createJobGraph(sg);
            List<Object> vertices = new ArrayList<>();
            for (JobVertex v : jg.getVerticesSortedTopologicallyFromSources()) {
                vertices.add(Json.obj("id", v.getID().toString(), "name", v.getName(), "parallelism", v.getParallelism()));
            }
            JobID id = mc.submitJob(jg).get().getJobID();
            // Map 0 and 1 finish; 2 and 3 are held
            Main.waitFor("Map 0 and 1 FINISHED", () -> finished(mc, id, "Map").size() == 2);
            Map<String, Object> atFailure = states(mc, id);
            int before = attempts.size();
            // Flink deletes the job's event log when the job ends: copies are kept, one taken when
            // the JobMaster loses leadership (the log it cut), one while the last stage runs
            // The log the new JobMaster recovers from is the one the old JobMaster leaves when its
            // event store stops (FileSystemJobEventStore.stop: the writer closes the open segment,
            // writing what it had buffered; the new JobMaster's start() then lists events.0, 1, ...
            // and writes only segments after them).  So the copy is taken after the old store has
            // stopped and before leadership is granted again: taken before the revocation, it could
            // miss a segment the writer had not even opened yet (one such run's copy held events.0
            // alone where Flink's recovery read events.0 and events.1).
            if (!eventWriterRunning()) throw new IllegalStateException("no " + EVENT_WRITER + " thread while the job runs");
            ha.revokeJobMasterLeadership(id).get(60, TimeUnit.SECONDS);
            Main.waitFor("the old JobMaster's event store stopped", () -> !eventWriterRunning());
            List<Object> filesAtFailure = copyEvents(dir, "events-at-failure");
            ha.grantJobMasterLeadership(id);
            held.remove("Map/2");
            held.remove("Map/3");
            Main.waitFor("Sink running after the failure", () -> attempts.stream().filter(a -> a.get("vertex").equals("Sink")).count() == SINK_P);
            Thread.sleep(500);
            List<Object> filesAtEnd = copyEvents(dir, "events-before-end");
            List<Object> storeLog = new ArrayList<>(eventStoreLog);
            held.clear();
            JobResult result = mc.requestJobResult(id).get(120, TimeUnit.SECONDS);
            if (result.getSerializedThrowable().isPresent()) throw new IllegalStateException("batch job failed");
            List<Object> ran = new ArrayList<>();
            for (int i = 0; i < attempts.size(); i++) {
                Map<String, Object> a = new TreeMap<>(attempts.get(i));
                a.put("after_failure", i >= before);
                ran.add(a);
            }
            Json.save(dir.resolve("sidecar.json"), Json.obj("job_id", id.toString(), "vertices", vertices,
                    "failure", "JobMaster leadership revoked and granted again (HaLeadershipControl)",
                    "event_files_at_failure", filesAtFailure, "event_files", filesAtEnd,
                    "events", readEvents(dir.resolve("events-before-end"), filesAtEnd.size()),
                    "events_recovered", readEvents(dir.resolve("events-at-failure"), filesAtFailure.size()),
                    "event_store_log", storeLog,
                    "states_at_failure", atFailure, "attempts", ran));
        } finally {
            mc.close();
            exec.shutdownNow();
        }
    }

    /** The name of FileSystemJobEventStore's writer thread (ExecutorThreadFactory: NAME-thread-N). */
    static final String EVENT_WRITER = "job-event-writer";

    static boolean eventWriterRunning() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().startsWith(EVENT_WRITER) && t.isAlive());
    }

    /**
     * Flink's own word on the segments its job event store reads and writes, in order: each
     * FileSystemJobEventStore INFO line "Job events will be written to {}." as ["write", "events.N"],
     * each "Start reading job event file {}" (its recovery's replay) as ["read", "events.N"].
     */
    static final List<Object> eventStoreLog = new CopyOnWriteArrayList<>();

    static void listenToEventStore() {
        org.apache.logging.log4j.core.LoggerContext ctx =
                (org.apache.logging.log4j.core.LoggerContext) org.apache.logging.log4j.LogManager.getContext(false);
        org.apache.logging.log4j.core.config.Configuration cfg = ctx.getConfiguration();
        String name = FileSystemJobEventStore.class.getName();
        eventStoreLog.clear();
        if (cfg.getLoggers().containsKey(name)) return;
        org.apache.logging.log4j.core.Appender a = new org.apache.logging.log4j.core.appender.AbstractAppender(
                "ckpt-event-store", null, null, true, org.apache.logging.log4j.core.config.Property.EMPTY_ARRAY) {
            @Override
            public void append(org.apache.logging.log4j.core.LogEvent e) {
                String f = e.getMessage().getFormat();
                Object[] p = e.getMessage().getParameters();
                if (p == null || p.length == 0) return;
                String file = String.valueOf(p[0]);
                file = file.substring(file.lastIndexOf('/') + 1);
                if (f.startsWith("Job events will be written to")) eventStoreLog.add(List.of("write", file));
                else if (f.startsWith("Start reading job event file")) eventStoreLog.add(List.of("read", file));
            }
        };
        a.start();
        cfg.addAppender(a);
        // its INFO lines to this appender only; its warnings and errors still to standard error
        org.apache.logging.log4j.core.config.LoggerConfig lc = new org.apache.logging.log4j.core.config.LoggerConfig(
                name, org.apache.logging.log4j.Level.INFO, false);
        lc.addAppender(a, org.apache.logging.log4j.Level.INFO, null);
        org.apache.logging.log4j.core.Appender err = cfg.getAppender("err");
        if (err != null) lc.addAppender(err, org.apache.logging.log4j.Level.WARN, null);
        cfg.addLogger(name, lc);
        ctx.updateLoggers();
    }

    static List<Integer> finished(MiniCluster mc, JobID id, String vertex) {
        try {
            AccessExecutionGraph g = mc.getExecutionGraph(id).get(10, TimeUnit.SECONDS);
            List<Integer> l = new ArrayList<>();
            for (AccessExecutionJobVertex v : g.getVerticesTopologically()) {
                if (!v.getName().equals(vertex)) continue;
                for (AccessExecutionVertex t : v.getTaskVertices()) {
                    if (t.getExecutionState().toString().equals("FINISHED")) l.add(t.getParallelSubtaskIndex());
                }
            }
            return l;
        } catch (Exception e) {
            return List.of();
        }
    }

    static Map<String, Object> states(MiniCluster mc, JobID id) throws Exception {
        AccessExecutionGraph g = mc.getExecutionGraph(id).get(10, TimeUnit.SECONDS);
        Map<String, Object> m = new TreeMap<>();
        for (AccessExecutionJobVertex v : g.getVerticesTopologically()) {
            List<Object> l = new ArrayList<>();
            for (AccessExecutionVertex t : v.getTaskVertices()) l.add(t.getExecutionState().toString());
            m.put(v.getName(), l);
        }
        return m;
    }

    /**
     * The events Flink's own reader (FileSystemJobEventStore.readEvent, its deserializers) reads
     * from the first n segments of the log in from (events-at-failure: what its recovery read).
     */
    static List<Object> readEvents(Path from, int n) throws Exception {
        Path tmp = Files.createTempDirectory("ckpt-events");
        for (int i = 0; i < n; i++) Files.copy(from.resolve("events." + i), tmp.resolve("events." + i));
        FileSystemJobEventStore store = new FileSystemJobEventStore(
                new org.apache.flink.core.fs.Path(tmp.toUri()), new Configuration());
        List<Object> l = new ArrayList<>();
        store.start();
        try {
            for (JobEvent e; (e = store.readEvent()) != null; ) l.add(eventJson(e));
        } finally {
            store.stop(true);
        }
        return l;
    }

    static Map<String, Object> eventJson(JobEvent e) throws Exception {
        if (e instanceof ExecutionJobVertexInitializedEvent) {
            ExecutionJobVertexInitializedEvent i = (ExecutionJobVertexInitializedEvent) e;
            return Json.obj("type", "vertex_initialized", "vertex", i.getJobVertexId().toString(),
                    "parallelism", i.getParallelism(), "inputs", i.getJobVertexInputInfos().size());
        }
        if (e instanceof ExecutionVertexResetEvent) {
            List<Object> l = new ArrayList<>();
            for (ExecutionVertexID v : ((ExecutionVertexResetEvent) e).getExecutionVertexIds()) {
                l.add(Json.obj("vertex", v.getJobVertexId().toString(), "subtask", v.getSubtaskIndex()));
            }
            return Json.obj("type", "vertices_reset", "subtasks", l);
        }
        ExecutionVertexFinishedEvent f = (ExecutionVertexFinishedEvent) e;
        Map<String, Object> co = new TreeMap<>();
        for (Map.Entry<org.apache.flink.runtime.jobgraph.OperatorID, java.util.concurrent.CompletableFuture<byte[]>> c :
                f.getOperatorCoordinatorSnapshotFutures().entrySet()) {
            co.put(c.getKey().toString(), Base64.getEncoder().encodeToString(c.getValue().get()));
        }
        Object shuffle = null;
        if (f.getShuffleMasterSnapshotFuture() != null) {
            ShuffleMasterSnapshot sms = f.getShuffleMasterSnapshotFuture().get();
            shuffle = Json.obj("class", sms.getClass().getName(), "incremental", sms.isIncremental());
        }
        return Json.obj("type", "vertex_finished", "vertex", f.getExecutionVertexId().getJobVertexId().toString(),
                "subtask", f.getExecutionVertexId().getSubtaskIndex(), "attempt", f.getAttemptNumber(),
                "snapshots", f.hasOperatorCoordinatorAndShuffleMasterSnapshots(), "coordinators", co,
                "shuffle", shuffle, "records_in", f.getIOMetrics().getNumRecordsIn(),
                "records_out", f.getIOMetrics().getNumRecordsOut(), "bytes_in", f.getIOMetrics().getNumBytesIn(),
                "bytes_out", f.getIOMetrics().getNumBytesOut());
    }

    /** Copy the events.N files under the HA storage directory into dir/to; list the copies. */
    static List<Object> copyEvents(Path dir, String to) throws Exception {
        List<Object> l = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> s = Files.walk(dir.resolve("ha"))) {
            files = s.filter(p -> p.getFileName().toString().startsWith("events.")).sorted().collect(java.util.stream.Collectors.toList());
        }
        Files.createDirectories(dir.resolve(to));
        for (Path p : files) {
            Path copy = dir.resolve(to).resolve(p.getFileName());
            Files.copy(p, copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            l.add(Json.obj("path", dir.getParent().relativize(copy).toString(), "size", Files.size(copy),
                    "flink_path", dir.getParent().relativize(p).toString()));
        }
        return l;
    }
}
