package ckpt.flink;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamGraphHasherV2;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.FileUtils;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Runs the harness's jobs in a MiniCluster (loopback only) and writes every artifact with its
 * sidecar under the output directory (build/flink/VERSION).  See t/flink/README.
 */
public final class Main {
    static Path out;
    static MiniCluster mc;
    private static URI rest;
    private static final List<Object> artifacts = new ArrayList<>();
    private static final List<Object> restores = new ArrayList<>();
    private static final List<Object> restCaptures = new ArrayList<>();
    private static final HttpClient http = HttpClient.newHttpClient();

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("restore")) {
            System.exit(Restore.main(args));
        }
        if (args.length > 0 && args[0].equals("orphans-restore")) {
            System.exit(Orphans.restore(args));
        }
        if (args.length > 0 && args[0].matches("restore-types|restore-sql")) System.exit(RestoreEnc.main(args));
        if (args.length > 0 && args[0].equals("restore-sqlkeys")) System.exit(SqlKeys.restore(args));
        if (args.length > 0 && args[0].equals("assign")) System.exit(Assign.main(args));
        if (args.length > 0 && args[0].equals("s3")) System.exit(S3.main(args));
        if (args.length > 0 && args[0].equals("kafka-restore")) System.exit(KafkaJob.restore(args));
        if (args.length > 0 && args[0].equals("kafka-consumer")) System.exit(KafkaConsumerJob.main(args));
        if (args.length > 0 && args[0].equals("oppar-savepoint")) System.exit(OpPar.savepoint(args));
        if (args.length > 0 && args[0].equals("oppar-restore")) System.exit(OpPar.restore(args));
        if (args.length > 0 && args[0].equals("jser-restore")) System.exit(JSerJob.restore(args));
        if (args.length > 0 && args[0].equals("filesink-savepoint")) System.exit(FileSinkJob.savepoint(args));
        out = Paths.get(args[0]).toAbsolutePath();
        String version = org.apache.flink.runtime.util.EnvironmentInformation.getVersion();
        if (Files.exists(out)) FileUtils.deleteDirectory(out.toFile());
        Files.createDirectories(out);
        long t0 = System.nanoTime();
        // KafkaJob's FileSource hands on one line per batch (its reader holds a file mid-way)
        clusterExtra.set(org.apache.flink.connector.file.src.reader.StreamFormat.FETCH_IO_SIZE, MemorySize.parse("1b"));
        String only = System.getProperty("ckpt.only", ""); // "batch", "types", "ttl", "sql", "orphans", "unaligned", "changelog", "kafka", "jser": that part alone
        // the Kafka broker of KafkaJob starts in its own JVM meanwhile
        java.util.concurrent.CompletableFuture<KafkaBroker> kafka =
                only.isEmpty() || only.equals("kafka") ? KafkaBroker.startAsync() : null;
        try {
            startCluster();
            if (only.equals("orphans")) Orphans.run(out);
            else if (only.isEmpty() || only.equals("unaligned") || only.equals("changelog")) streaming();
            if (only.isEmpty()) Assign.run(out, artifacts); // the streaming job's artifacts
            if (only.isEmpty() || only.equals("types")) TypesJob.run(mc, out);
            if (only.isEmpty() || only.equals("ttl")) TtlJob.run(out);
            if (only.isEmpty() || only.equals("sql")) SqlJob.run(mc, out);
            if (only.isEmpty() || only.equals("sqlkeys")) SqlKeys.run(mc, out);
            if (only.isEmpty() || only.equals("jser")) JSerJob.run(out);
            if (kafka != null) KafkaJob.run(out, kafka);
            if (args.length > 1 && args[1].equals("batch") && (only.isEmpty() || only.equals("batch"))) Batch.run(mc, out);
        } finally {
            KafkaBroker.close(kafka);
            if (mc != null) mc.close();
        }
        Json.save(out.resolve("index.json"), Json.obj("flink_version", version, "artifacts", artifacts,
                "restores", restores, "refusals", refusals, "accepted", accepted, "in_flight_restore", inFlightRestore, "rest", restCaptures,
                "edited", edited, "relocatable", relocatable, "orphans", orphans == null ? null : "orphans/sidecar.json",
                "assign", Assign.index, "ttl", Files.exists(out.resolve("ttl/sidecar.json")) ? "ttl/sidecar.json" : null,
                "sql", Files.exists(out.resolve("sql/sidecar.json")) ? "sql/sidecar.json" : null,
                "batch", Files.exists(out.resolve("batch/sidecar.json")) ? "batch/sidecar.json" : null,
                "kafka", Files.exists(out.resolve("kafka/sidecar.json")) ? "kafka/sidecar.json" : null,
                "jser", Files.exists(out.resolve("jser/sidecar.json")) ? "jser/sidecar.json" : null,
                "seconds", (System.nanoTime() - t0) / 1_000_000_000L));
        System.out.println("flink " + version + ": " + artifacts.size() + " artifacts, " + restores.size()
                + " restores, " + restCaptures.size() + " REST captures in " + out);
    }

    /** The MiniCluster every job of the harness runs in (and the restores of Restore). */
    /** Added to the MiniCluster's configuration (S3.java: Flink's S3 file system). */
    static final Configuration clusterExtra = new Configuration();

    static void startCluster() throws Exception {
        Configuration cc = new Configuration(clusterExtra);
        cc.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        cc.set(RestOptions.ADDRESS, "127.0.0.1");
        cc.set(RestOptions.BIND_PORT, "0");
        // the REST handlers cache the execution graph and checkpoint statistics (3 s by default):
        // a capture must show the moment it is taken
        cc.set(org.apache.flink.configuration.ConfigOptions.key("web.refresh-interval").stringType().noDefaultValue(), "100");
        cc.set(org.apache.flink.configuration.ConfigOptions.key("rest.cache.checkpoint-statistics.timeout").stringType()
                .noDefaultValue(), "100 ms");
        // read by the JobManager: the harness keeps every checkpoint it names
        cc.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 20);
        cc.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("64m"));
        cc.set(TaskManagerOptions.NETWORK_MEMORY_MIN, MemorySize.parse("32m"));
        cc.set(TaskManagerOptions.NETWORK_MEMORY_MAX, MemorySize.parse("32m"));
        mc = new MiniCluster(new MiniClusterConfiguration.Builder().setConfiguration(cc)
                .setNumTaskManagers(1).setNumSlotsPerTaskManager(4).setCommonBindAddress("127.0.0.1").build());
        mc.start();
        rest = mc.getRestAddress().get();
    }

    static Configuration jobConf(String run, String backend) {
        Configuration c = new Configuration();
        c.set(StateBackendOptions.STATE_BACKEND, backend.startsWith("forst") ? "forst" : backend.equals("changelog") ? "hashmap"
                : backend.equals("changelog-rocksdb") ? "rocksdb" : backend);
        c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, out.resolve("checkpoints").resolve(run).toUri().toString());
        c.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        c.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofHours(1));
        c.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 10);
        // ForSt (Flink 2.x; Restore --backend forst): its files in the task manager's local directory, as
        // TtlJob's; forst-heap: its timers on the heap (state.backend.forst.timer-service.factory HEAP),
        // the one way ForSt 2.3 restores a canonical savepoint (ForStSyncKeyedStateBackendBuilder:
        // ForStHeapTimersFullRestoreOperation; with its default ForStDB timers it throws "Not support
        // restoring yet for ForStStateBackend")
        if (backend.startsWith("forst")) c.set(org.apache.flink.configuration.ConfigOptions.key("state.backend.forst.primary-dir")
                .stringType().noDefaultValue(), "local-dir");
        if (backend.equals("forst-heap")) c.set(org.apache.flink.configuration.ConfigOptions.key(
                "state.backend.forst.timer-service.factory").stringType().noDefaultValue(), "HEAP");
        if (backend.startsWith("changelog")) changelogConf(c, run, false); // Restore --backend changelog, changelog-rocksdb
        if (backend.equals("changelog-rocksdb")) c.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        return c;
    }

    static final class Run {
        final String name;
        final String backend;
        final JobClient client;
        final JobID id;
        final Map<String, Object> job;
        final Map<String, Object> jobGraph;

        Run(String name, String backend, Configuration conf, Map<String, Integer> p) throws Exception {
            this.name = name;
            this.backend = backend;
            StreamExecutionEnvironment env = new TestStreamEnvironment(mc, conf, 1, Collections.emptyList(), Collections.emptyList());
            StateJob.build(env, p);
            StreamGraph sg = env.getStreamGraph();
            sg.setJobName("ckpt-" + name);
            job = graph(sg);
            jobGraph = ckptGraph(sg, job);
            client = env.executeAsync(sg);
            id = client.getJobID();
        }

        void cancel() throws Exception {
            Main.cancel(client, "job " + name);
        }

        JobStatus status() {
            try {
                return client.getJobStatus().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }
    }

    /** The job's own list of operators: uid, name, parallelism and the id Flink derives. */
    static Map<String, Object> graph(StreamGraph sg) {
        Map<Integer, byte[]> hashes = new StreamGraphHasherV2().traverseStreamGraphAndGenerateHashes(sg);
        List<StreamNode> nodes = new ArrayList<>(sg.getStreamNodes());
        nodes.sort(Comparator.comparingInt(StreamNode::getId));
        List<Object> ops = new ArrayList<>();
        for (StreamNode n : nodes) {
            ops.add(Json.obj("uid", n.getTransformationUID(), "name", n.getOperatorName(),
                    "id", new OperatorID(hashes.get(n.getId())).toHexString(), "parallelism", n.getParallelism()));
        }
        return Json.obj("name", sg.getJobName(), "max_parallelism", StateJob.MAX_PARALLELISM, "operators", ops);
    }

    static final java.util.Set<String> PARTITIONERS = java.util.Set.of(
            "forward", "rescale", "rebalance", "hash", "broadcast", "global", "shuffle", "custom");

    /** The job graph Flink generates from sg, in ckpt-graph(5)'s words (for ckpt-merge -g). */
    static Map<String, Object> ckptGraph(StreamGraph sg, Map<String, Object> job) {
        Map<String, String> uids = new TreeMap<>();
        for (Object o : (List<?>) job.get("operators")) {
            Map<?, ?> m = (Map<?, ?>) o;
            if (m.get("uid") != null) uids.put((String) m.get("id"), (String) m.get("uid"));
        }
        org.apache.flink.runtime.jobgraph.JobGraph jg =
                org.apache.flink.streaming.api.graph.StreamingJobGraphGenerator.createJobGraph(sg);
        List<Object> vertices = new ArrayList<>();
        List<Object> edges = new ArrayList<>();
        for (org.apache.flink.runtime.jobgraph.JobVertex v : jg.getVerticesSortedTopologicallyFromSources()) {
            List<Object> ops = new ArrayList<>();
            for (org.apache.flink.runtime.OperatorIDPair op : v.getOperatorIDs()) {
                String id = op.getGeneratedOperatorID().toHexString();
                Map<String, Object> o = Json.obj("id", id);
                if (uids.containsKey(id)) o.put("uid", uids.get(id));
                ops.add(o);
            }
            vertices.add(Json.obj("id", v.getID().toString(), "name", v.getName(), "parallelism", v.getParallelism(),
                    "max_parallelism", v.getMaxParallelism(), "operators", ops));
            for (org.apache.flink.runtime.jobgraph.JobEdge e : v.getInputs()) {
                Map<String, Object> edge = Json.obj("source", e.getSource().getProducer().getID().toString(),
                        "target", v.getID().toString(),
                        "distribution", e.getDistributionPattern().toString().toLowerCase(java.util.Locale.ROOT),
                        "partition", e.getSource().getResultType().toString().toLowerCase(java.util.Locale.ROOT));
                // the partitioner (ckpt-graph(5)), which rescales in-flight data: the words ckpt knows
                String ship = String.valueOf(e.getShipStrategyName()).toLowerCase(java.util.Locale.ROOT);
                if (PARTITIONERS.contains(ship)) edge.put("partitioner", ship);
                edges.add(edge);
            }
        }
        return Json.obj("vertices", vertices, "edges", edges);
    }

    static void waitFor(String what, BooleanSupplier cond) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) throw new IllegalStateException("timed out waiting for " + what);
            Thread.sleep(20);
        }
    }

    static void drained(Map<String, Integer> p) throws Exception {
        long n = StateJob.expectedRecords(p);
        long rules = (long) p.get("src-union") * StateJob.RULES_PER_SUBTASK * p.get("broadcast");
        waitFor("every record through the job", () -> Ctl.keyedSeen.get() == n && Ctl.ambigSeen.get() == n
                && Ctl.broadcastSeen.get() == n
                && Ctl.broadcastRulesSeen.get() == rules);
    }

    static Path local(String uri) {
        return Paths.get(URI.create(uri.startsWith("file:") ? uri : "file:" + uri));
    }

    static Map<String, Object> contents() {
        return new TreeMap<>(Ctl.contents);
    }

    /** Record an artifact (a directory holding _metadata) and write its sidecar. */
    static void artifact(Run r, String name, String kind, Path dir, Map<String, Object> contents, String note) throws Exception {
        artifact(r.backend, r.id.toString(), r.job, name, kind, dir, contents, note);
    }

    static void artifact(String backend, String jobId, Map<String, Object> job, String name, String kind, Path dir,
            Map<String, Object> contents, String note) throws Exception {
        artifact(backend, jobId, job, name, kind, dir, contents, note, true);
    }

    /** The sidecar of an artifact, listed in index.json's "artifacts" if listed. */
    static void artifact(String backend, String jobId, Map<String, Object> job, String name, String kind, Path dir,
            Map<String, Object> contents, String note, boolean listed) throws Exception {
        Map<String, Object> side = Json.obj("artifact", name, "kind", kind, "backend", backend,
                "path", out.relativize(dir).toString(), "job_id", jobId, "note", note,
                "metadata", Meta.read(dir.resolve("_metadata")), "job", job, "contents", contents);
        Path sc = out.resolve("sidecars").resolve(name + ".json");
        Json.save(sc, side);
        sidecars.put(name, side);
        if (listed) artifacts.add(Json.obj("name", name, "kind", kind, "path", out.relativize(dir).toString(),
                "sidecar", out.relativize(sc).toString()));
    }

    static final Map<String, Map<String, Object>> sidecars = new TreeMap<>();
    static Map<String, Object> orphans;

    /** Add to the artifact's sidecar what the State Processor API reads back from it ("spa"). */
    static void spa(String name) throws Exception {
        Map<String, Object> side = sidecars.get(name);
        side.put("spa", Spa.read(mc, out.resolve((String) side.get("path"))));
        Json.save(out.resolve("sidecars").resolve(name + ".json"), side);
    }

    static Path savepoint(Run r, String name, SavepointFormatType fmt) throws Exception {
        Ctl.contents.clear();
        Path dir = savepoint(r.client, fmt, out.resolve(name));
        artifact(r, name, "savepoint", dir, contents(), null);
        return dir;
    }

    /** A savepoint of job c in format fmt, moved to target (savepoint(c, fmt, target, 90)). */
    static Path savepoint(JobClient c, SavepointFormatType fmt, Path target) throws Exception {
        return savepoint(c, fmt, target, 90);
    }

    /**
     * The savepoint every job of the harness takes: job c's in format fmt, written by Flink under
     * target's parent's tmp/ and moved to target, waited for up to timeout seconds.  Triggered again
     * while Flink refuses it because a task is not running yet ("... not being executed ...": the
     * sources can be through before every task of the job runs, on a loaded machine).
     */
    static Path savepoint(JobClient c, SavepointFormatType fmt, Path target, int timeout) throws Exception {
        String tmp = target.getParent().resolve("tmp").toUri().toString();
        String p = retried(() -> c.triggerSavepoint(tmp, fmt).get(timeout, TimeUnit.SECONDS));
        Files.move(local(p), target);
        return target;
    }

    /** Job id's savepoint in format fmt under dir on the harness's cluster, its path (retried). */
    static String triggerSavepoint(JobID id, String dir, SavepointFormatType fmt, int timeout) throws Exception {
        return retried(() -> mc.triggerSavepoint(id, dir, false, fmt).get(timeout, TimeUnit.SECONDS));
    }

    /** What trigger returns, called again while Flink refuses it because a task is not running yet. */
    static String retried(java.util.concurrent.Callable<String> trigger) throws Exception {
        for (int tries = 0; ; tries++) {
            try {
                return trigger.call();
            } catch (java.util.concurrent.ExecutionException e) {
                String m = String.valueOf(e.getMessage());
                if (tries >= 300 || !(m.contains("not being executed") || m.contains("Not all required tasks"))) throw e;
                Thread.sleep(200);
            }
        }
    }

    /** Cancel job c (what names it in the timeout's message) and wait until it is globally terminal. */
    static void cancel(JobClient c, String what) throws Exception {
        c.cancel().get(60, TimeUnit.SECONDS);
        waitFor(what + " cancelled", () -> {
            try {
                return c.getJobStatus().get(10, TimeUnit.SECONDS).isGloballyTerminalState();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    static Path checkpoint(Run r, String name, boolean keepContents, String note) throws Exception {
        Ctl.contents.clear();
        String p;
        try {
            p = trigger(r.id);
        } catch (java.util.concurrent.TimeoutException e) {
            System.err.println("checkpoint of " + r.name + " timed out: " + get("/jobs/" + r.id + "/checkpoints"));
            throw e;
        }
        Path dir = local(p);
        if (name != null) artifact(r, name, "checkpoint", dir, keepContents ? contents() : null, note);
        return dir;
    }

    /**
     * A checkpoint of job id, triggered again while Flink refuses it because a task is not running
     * yet ("Not all required tasks are currently running": records can be through before the sink's
     * task is RUNNING on a loaded machine).
     */
    static String trigger(JobID id) throws Exception {
        for (int i = 0; ; i++) {
            try {
                return mc.triggerCheckpoint(id).get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                if (i >= 100 || !String.valueOf(e.getMessage()).contains("Not all required tasks are currently running")) throw e;
                Thread.sleep(100);
            }
        }
    }

    static String get(String path) throws Exception {
        HttpResponse<String> resp = http.send(HttpRequest.newBuilder(rest.resolve(path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() != 200) throw new IllegalStateException("GET " + path + ": " + resp.statusCode() + " " + resp.body());
        return resp.body();
    }

    /** GET /jobs/:id, each vertex, /checkpoints and the details of its latest checkpoint, into rest/NAME/. */
    static void captureRest(Run r, String name, String note) throws Exception {
        Thread.sleep(300);
        Path dir = out.resolve("rest").resolve(name);
        Files.createDirectories(dir);
        String job = get("/jobs/" + r.id);
        Files.writeString(dir.resolve("job.json"), job);
        List<String> files = new ArrayList<>(List.of("job.json"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"id\"\\s*:\\s*\"([0-9a-f]{32})\"").matcher(job);
        List<String> vids = new ArrayList<>();
        while (m.find()) if (!m.group(1).equals(r.id.toString()) && !vids.contains(m.group(1))) vids.add(m.group(1));
        for (String v : vids) {
            Files.writeString(dir.resolve("vertex-" + v + ".json"), get("/jobs/" + r.id + "/vertices/" + v));
            files.add("vertex-" + v + ".json");
        }
        String cps = get("/jobs/" + r.id + "/checkpoints");
        Files.writeString(dir.resolve("checkpoints.json"), cps);
        files.add("checkpoints.json");
        long latest = JSON.readTree(cps).path("latest").path("completed").path("id").asLong(-1);
        if (latest >= 0) {
            String details = get("/jobs/" + r.id + "/checkpoints/details/" + latest);
            Files.writeString(dir.resolve("checkpoint-details.json"), details);
            files.add("checkpoint-details.json");
            // per vertex, each subtask's part in that checkpoint
            for (var it = JSON.readTree(details).path("tasks").fieldNames(); it.hasNext(); ) {
                String v = it.next();
                String f = "checkpoint-subtasks-" + v + ".json";
                Files.writeString(dir.resolve(f), get("/jobs/" + r.id + "/checkpoints/details/" + latest + "/subtasks/" + v));
                files.add(f);
            }
        }
        // the job graph Flink generated for this job, in ckpt-graph(5)'s words: the oracle for ckpt-plan -G
        Json.save(dir.resolve("jobgraph.json"), r.jobGraph);
        restCaptures.add(Json.obj("name", name, "path", out.relativize(dir).toString(), "job_id", r.id.toString(),
                "files", files, "note", note, "job", r.job));
    }

    static final org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper JSON =
            new org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper();

    /** At least n subtasks FINISHED, as GET /jobs/:id counts them per vertex. */
    static boolean finishedSubtasks(Run r, int n) {
        try {
            int total = 0;
            for (var v : JSON.readTree(get("/jobs/" + r.id)).get("vertices")) total += v.get("tasks").get("FINISHED").asInt();
            return total >= n;
        } catch (Exception e) {
            return false;
        }
    }

    static void streaming() throws Exception {
        Map<String, Integer> p = StateJob.defaultParallelism();

        // hashmap: both savepoint formats and an aligned checkpoint with every source running; then
        // subtask 0 of src-finishing finishes and a checkpoint is taken after that (FLIP-147).
        if (System.getProperty("ckpt.only", "").equals("unaligned")) {
            unaligned(p);
            return;
        }
        if (System.getProperty("ckpt.only", "").equals("changelog")) {
            changelog(p);
            return;
        }
        Ctl.reset();
        Run hm = new Run("hashmap", "hashmap", jobConf("hashmap", "hashmap"), p);
        drained(p);
        captureRest(hm, "running", "every subtask running, all records through");
        Path spCanonical = savepoint(hm, "savepoint-hashmap-canonical", SavepointFormatType.CANONICAL);
        savepoint(hm, "savepoint-hashmap-native", SavepointFormatType.NATIVE);
        checkpoint(hm, "checkpoint-hashmap-aligned", true, null);
        Ctl.releaseFinishing = true;
        // the finishing subtask waits for a checkpoint to complete before it is FINISHED
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!finishedSubtasks(hm, 1 + p.get("src-done"))) {
            if (System.nanoTime() > end) throw new IllegalStateException("src-finishing subtask 0 never FINISHED");
            checkpoint(hm, null, false, null);
            Thread.sleep(200);
        }
        Path cpFinished = checkpoint(hm, "checkpoint-hashmap-finished", true,
                "subtask 0 of src-finishing FINISHED, src-done fully finished");
        captureRest(hm, "partly-finished", "subtask 0 of src-finishing and all of src-done FINISHED; latest checkpoint taken after that");
        unionFinishing(hm, p);
        hm.cancel();

        // RocksDB with incremental checkpoints: both savepoint formats, two incremental checkpoints
        Ctl.reset();
        Configuration rc = jobConf("rocksdb", "rocksdb");
        rc.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        Run rd = new Run("rocksdb", "rocksdb", rc, p);
        drained(p);
        Path spRocksCanonical = savepoint(rd, "savepoint-rocksdb-canonical", SavepointFormatType.CANONICAL);
        Path spRocksNative = savepoint(rd, "savepoint-rocksdb-native", SavepointFormatType.NATIVE);
        checkpoint(rd, "checkpoint-rocksdb-incremental-1", true, null);
        checkpoint(rd, "checkpoint-rocksdb-incremental-2", true, "incremental on checkpoint 1: its files are shared");
        rd.cancel();

        // snapshot compression (Snappy) on, hashmap
        Ctl.reset();
        Configuration sc = jobConf("snappy", "hashmap");
        sc.set(ExecutionOptions.SNAPSHOT_COMPRESSION, true);
        Run sn = new Run("snappy", "hashmap", sc, p);
        drained(p);
        checkpoint(sn, "checkpoint-hashmap-snappy", true, "execution.checkpointing.snapshot-compression: true");
        sn.cancel();

        changelog(p);

        Path cpu = unaligned(p);
        Ctl.reset();

        // the State Processor API reads back the canonical savepoints: the oracle for state contents
        spa("savepoint-hashmap-canonical");
        spa("savepoint-rocksdb-canonical");

        // ckpt-merge's edits as Flink's State Processor API makes them (SavepointWriter): the
        // stand-ins edit.bats restores beside ckpt-merge -S's output
        editedBySpa("spa-reuid", "savepoint-hashmap-canonical", spCanonical, List.of("--uid", "broadcast=broadcast-v2"),
                w -> w.changeOperatorIdentifier(org.apache.flink.state.api.OperatorIdentifier.forUid("broadcast"),
                        org.apache.flink.state.api.OperatorIdentifier.forUid("broadcast-v2")));
        editedBySpa("spa-drop", "savepoint-hashmap-canonical", spCanonical, List.of("--drop", "broadcast"),
                w -> w.removeOperator(org.apache.flink.state.api.OperatorIdentifier.forUid("broadcast")));

        // a retained checkpoint moved away from where Flink wrote it, its _metadata naming the old place
        relocatable(p);

        // restores at other parallelisms (max parallelism unchanged)
        Map<String, Integer> q = new TreeMap<>(p);
        q.put("src-union", 3);
        q.put("src-finishing", 2);
        q.put("src-done", 3);
        q.put("chain", 2);
        q.put("keyed", 3);
        q.put("broadcast", 3);
        restore("savepoint-hashmap-canonical", spCanonical, "hashmap", q);
        restore("savepoint-rocksdb-native", spRocksNative, "rocksdb", q);
        restore("checkpoint-hashmap-finished", cpFinished, "hashmap", q);
        restore("savepoint-rocksdb-canonical", spRocksCanonical, "hashmap", q);
        Map<String, Integer> one = new TreeMap<>(p);
        for (String k : one.keySet()) one.put(k, 1);
        restore("savepoint-hashmap-canonical", spCanonical, "hashmap", one);

        // the unaligned checkpoint, with its in-flight data, at other parallelisms: Flink rescales it
        Map<String, Object> inFlight = Json.obj("artifact", "checkpoint-unaligned", "path", out.relativize(cpu).toString(),
                "parallelism", q);
        try {
            inFlight.put("restore", restore("checkpoint-unaligned", cpu, "hashmap", q, false));
            inFlight.put("accepted", true);
        } catch (Exception e) {
            inFlight.put("accepted", false);
            inFlight.put("message", String.valueOf(e));
        }
        Json.save(out.resolve("restores").resolve("checkpoint-unaligned-rescaled.json"), inFlight);
        inFlightRestore = "restores/checkpoint-unaligned-rescaled.json";

        // restores Flink refuses: the new job lacks a uid that has state; the max parallelism changed
        StateJob.newUids.put("broadcast", "broadcast-v2");
        refused("missing-uid", "savepoint-hashmap-canonical", spCanonical, p);
        StateJob.newUids.clear();
        StateJob.maxParallelism = 64;
        refused("max-parallelism", "savepoint-hashmap-canonical", spCanonical, p);
        StateJob.maxParallelism = StateJob.MAX_PARALLELISM;

        // the uid the new job lacks, with allowNonRestoredState: Flink drops that state and runs
        StateJob.newUids.put("broadcast", "broadcast-v2");
        String allowed = restore("savepoint-hashmap-canonical", spCanonical, "hashmap", p, false, "missing-uid-allowed");
        StateJob.newUids.clear();
        accepted.add(Json.obj("name", "missing-uid-allowed", "sidecar", allowed));

        // union list state partly finished: a checkpoint Flink itself never completes (unionFinishing),
        // written with Flink's own serializer from the one taken after src-finishing 0 finished, with
        // subtask 0 of the src-union vertex FINISHED; then restored by Flink
        Path cpUnion = unionPartlyFinished(cpFinished);
        Map<String, Object> ur = unionRefusal;
        try {
            ur.put("restore", restore("checkpoint-union-partly-finished", cpUnion, "hashmap", p, false, "same"));
            ur.put("restore_accepted", true);
        } catch (Exception e) {
            ur.put("restore_accepted", false);
            ur.put("restore_message", flinkMessage(e));
        }
        Path usc = out.resolve("refusals").resolve("union-partly-finished.json");
        Json.save(usc, ur);
        refusals.add(Json.obj("name", "union-partly-finished", "sidecar", out.relativize(usc).toString()));
        if (cpu == null) throw new IllegalStateException("no unaligned checkpoint");

        // issues 29 and 26: the orphans job (leaks, an in-progress checkpoint, an incremental chain)
        Orphans.run(out);
    }

    /**
     * The changelog state backend (state.changelog.enabled over hashmap, the filesystem DSTL under the
     * run's checkpoint directory): checkpoint-changelog with materialization off, every change in the
     * changelog; checkpoint-changelog-materialized with materialization every 300 ms while the keyed
     * operators are slowed (15 ms a record), taken as soon as every record is through: a materialized
     * part and the changes after it; checkpoint-changelog-rocksdb the same over RocksDB with incremental
     * checkpoints (its materialized part RocksDB's files).
     */
    static void changelog(Map<String, Integer> p) throws Exception {
        Ctl.reset();
        Run only = new Run("changelog", "changelog", changelogConf("changelog", false), p);
        drained(p);
        checkpoint(only, "checkpoint-changelog", true, "changelog backend over hashmap, materialization off");
        only.cancel();
        Ctl.reset();
        Ctl.slowMicros = 15_000;
        Run mat = new Run("changelog-materialized", "changelog", changelogConf("changelog-materialized", true), p);
        drained(p);
        checkpoint(mat, "checkpoint-changelog-materialized", true,
                "changelog backend over hashmap, materialized every 300 ms while the records went through");
        mat.cancel();
        // the same over RocksDB with incremental checkpoints: the materialized part is RocksDB's files
        Ctl.reset();
        Ctl.slowMicros = 15_000;
        Run rk = new Run("changelog-rocksdb", "changelog-rocksdb",
                changelogConf(jobConf("changelog-rocksdb", "changelog-rocksdb"), "changelog-rocksdb", true), p);
        drained(p);
        checkpoint(rk, "checkpoint-changelog-rocksdb", true,
                "changelog backend over RocksDB (incremental), materialized every 300 ms while the records went through");
        rk.cancel();
        Ctl.reset();
    }

    static Configuration changelogConf(String run, boolean materialize) {
        return changelogConf(jobConf(run, "hashmap"), run, materialize);
    }

    static Configuration changelogConf(Configuration c, String run, boolean materialize) {
        c.set(org.apache.flink.configuration.ConfigOptions.key("state.changelog.enabled").stringType().noDefaultValue(), "true");
        c.set(org.apache.flink.configuration.ConfigOptions.key("state.changelog.storage").stringType().noDefaultValue(), "filesystem");
        c.set(org.apache.flink.configuration.ConfigOptions.key("dstl.dfs.base-path").stringType().noDefaultValue(), out.resolve("checkpoints").resolve(run).resolve("dstl").toUri().toString());
        c.set(org.apache.flink.configuration.ConfigOptions.key("state.changelog.periodic-materialize.enabled").stringType().noDefaultValue(), String.valueOf(materialize));
        c.set(org.apache.flink.configuration.ConfigOptions.key("state.changelog.periodic-materialize.interval").stringType().noDefaultValue(), "300 ms");
        return c;
    }

    /**
     * Unaligned under back-pressure: the sources flood, the keyed operator is slow.  The checkpoint
     * kept is the first whose keyed operator holds input channel state (merge.bats's gate and channel
     * checks need it): in the one TaskManager every channel is local, so what a slow task holds is the
     * rest of the buffer it was reading when the barrier overtook it, and not every checkpoint has that.
     * The job retains 10 checkpoints: the one read here is still there.
     */
    static Path unaligned(Map<String, Integer> p) throws Exception {
        Ctl.reset();
        Ctl.flood = true;
        Ctl.slowMicros = 500;
        Configuration uc = jobConf("unaligned", "hashmap");
        uc.set(CheckpointingOptions.ENABLE_UNALIGNED, true);
        uc.set(CheckpointingOptions.ALIGNED_CHECKPOINT_TIMEOUT, Duration.ZERO);
        // a checkpoint triggered by hand is aligned (CHECKPOINT); the periodic ones are unaligned
        uc.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(700));
        Run un = new Run("unaligned", "hashmap", uc, p);
        waitFor("back-pressure", () -> Ctl.keyedSeen.get() > 200);
        String path = null;
        long seen = -1;
        int tried = 0;
        String keyed = null;
        for (Object o : (List<?>) un.job.get("operators")) {
            Map<?, ?> m = (Map<?, ?>) o;
            if (StateJob.uid("keyed").equals(m.get("uid"))) keyed = (String) m.get("id");
        }
        // a loaded machine can starve the checkpoint lock of the flooding legacy sources for a while
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (path == null) {
            if (System.nanoTime() > end) throw new IllegalStateException("no unaligned checkpoint with channel state: "
                    + get("/jobs/" + un.id + "/checkpoints"));
            Thread.sleep(200);
            var c = JSON.readTree(get("/jobs/" + un.id + "/checkpoints")).path("latest").path("completed");
            if (c.path("checkpoint_type").asText().equals("UNALIGNED_CHECKPOINT") && c.path("persisted_data").asLong() > 0
                    && c.path("id").asLong() != seen) {
                seen = c.path("id").asLong();
                tried++;
                if (holdsInput(local(c.path("external_path").asText()), keyed)) path = c.path("external_path").asText();
            }
        }
        un.cancel();
        System.err.println("unaligned: checkpoint " + seen + " kept, " + tried + " looked at");
        Path cpu = local(path);
        // the other retained checkpoints of the run go: nothing is named after them
        try (var chks = Files.list(cpu.getParent())) {
            for (Path d : (Iterable<Path>) chks::iterator) {
                if (d.getFileName().toString().startsWith("chk-") && !d.equals(cpu)) FileUtils.deleteDirectory(d.toFile());
            }
        }
        artifact(un, "checkpoint-unaligned", "checkpoint", cpu, null,
                "periodic unaligned checkpoint under back-pressure; contents not fixed (the sources flood)");
        Ctl.reset();
        return cpu;
    }

    /** Whether the keyed operator (id) of the checkpoint at dir holds input channel state. */
    static boolean holdsInput(Path dir, String id) throws Exception {
        org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata md;
        try (var in = new java.io.DataInputStream(Files.newInputStream(dir.resolve("_metadata")))) {
            md = org.apache.flink.runtime.checkpoint.Checkpoints.loadCheckpointMetadata(in, Main.class.getClassLoader(), dir.toString());
        }
        for (org.apache.flink.runtime.checkpoint.OperatorState os : md.getOperatorStates()) {
            if (!os.getOperatorID().toHexString().equals(id)) continue;
            for (org.apache.flink.runtime.checkpoint.OperatorSubtaskState s : os.getSubtaskStates().values()) {
                if (!s.getInputChannelState().isEmpty()) return true;
            }
        }
        return false;
    }

    static final List<Object> edited = new ArrayList<>();
    static final List<Object> relocatable = new ArrayList<>();

    /** A savepoint the State Processor API wrote from dir with one edit, into edited/NAME (index "edited"). */
    static void editedBySpa(String name, String artifact, Path dir, List<String> ckptArgs,
            java.util.function.UnaryOperator<org.apache.flink.state.api.SavepointWriter> edit) throws Exception {
        Path to = out.resolve("edited").resolve(name);
        Spa.write(mc, dir, to, edit);
        edited.add(Json.obj("name", name, "artifact", artifact, "path", out.relativize(to).toString(),
                "ckpt_merge", ckptArgs, "by", "State Processor API (SavepointWriter.fromExistingSavepoint)"));
    }

    /**
     * RocksDB, incremental, every state in a file (no inline handles: the small-file threshold 0): a
     * retained checkpoint written under relocate-old/, restored by Flink from there (restores/
     * checkpoint-rocksdb-moved-to-3.json), then moved to relocated/; Flink's restore from the new place
     * fails (its _metadata names the old one).  Index "relocatable"; sidecars/checkpoint-rocksdb-moved.json.
     */
    static void relocatable(Map<String, Integer> p) throws Exception {
        Ctl.reset();
        Path old = out.resolve("relocate-old");
        Path moved = out.resolve("relocated");
        Configuration c = jobConf("relocate", "rocksdb");
        c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, old.toUri().toString());
        c.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        c.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
        Run r = new Run("relocate", "rocksdb", c, p);
        drained(p);
        Ctl.contents.clear();
        String pointer = trigger(r.id);
        Map<String, Object> contents = contents();
        r.cancel();
        Path cp = local(pointer);
        String name = "checkpoint-rocksdb-moved";
        String before = restore(name, cp, "rocksdb", Restore.parallelism(3), false);
        Path newCp = moved.resolve(old.relativize(cp));
        Files.move(old, moved);
        // Flink itself cannot restore it from the new place
        String refusal;
        try {
            restoreReports(name, newCp, "rocksdb", Restore.parallelism(3), false, java.util.Set.of());
            throw new IllegalStateException(name + ": Flink restored it from the new place");
        } catch (RestoreFailed e) {
            refusal = Restore.message(e.getCause());
        }
        String oldPrefix = pointer.substring(0, pointer.length() - old.relativize(cp).toString().length() - 1);
        artifact(r.backend, r.id.toString(), r.job, name, "checkpoint", newCp, contents,
                "retained checkpoint moved from old_prefix (deleted) to new_dir; its _metadata names absolute paths", false);
        relocatable.add(Json.obj("name", name, "path", out.relativize(newCp).toString(),
                "sidecar", "sidecars/" + name + ".json", "old_prefix", oldPrefix, "old_dir", old.toString(),
                "new_dir", out.relativize(moved).toString(), "restore_before_move", before, "backend", "rocksdb",
                "unmoved_restore_message", refusal));
    }

    static final List<Object> refusals = new ArrayList<>();
    static final List<Object> accepted = new ArrayList<>();
    static final Map<String, Object> unionRefusal = new java.util.LinkedHashMap<>();

    /** The innermost message among e's causes that names union list state, else the whole chain. */
    static String flinkMessage(Throwable e) {
        StringBuilder all = new StringBuilder();
        String found = null;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("UnionListState")) found = t.getMessage();
            all.append(all.length() > 0 ? " <- " : "").append(t);
        }
        return found != null ? found : all.toString();
    }

    /** The src-union vertex's subtask states, as GET /jobs/:id/vertices/:vid lists them. */
    static List<String> unionSubtaskStates(Run r) throws Exception {
        List<String> st = new ArrayList<>();
        for (var v : JSON.readTree(get("/jobs/" + r.id)).get("vertices")) {
            if (!v.get("name").asText().contains("src-union")) continue;
            for (var s : JSON.readTree(get("/jobs/" + r.id + "/vertices/" + v.get("id").asText())).get("subtasks")) {
                st.add(s.get("status").asText());
            }
        }
        return st;
    }

    /**
     * Subtask 0 of src-union (union list state "union-offsets") returns while subtask 1 runs.  Flink
     * aborts every checkpoint from then on (DefaultCheckpointPlan, FLIP-147), so the subtask never
     * gets the final checkpoint it waits for and never reaches FINISHED: record what Flink says.
     */
    static void unionFinishing(Run r, Map<String, Integer> p) throws Exception {
        Ctl.releaseUnion = true;
        String message = null;
        int attempts = 0;
        List<String> errors = new ArrayList<>();
        while (message == null && attempts < 20) {
            attempts++;
            Thread.sleep(200);
            try {
                mc.triggerCheckpoint(r.id).get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                String m = flinkMessage(e);
                if (m.contains("UnionListState")) message = m;
                else errors.add(m);
            }
        }
        Thread.sleep(500);
        unionRefusal.put("name", "union-partly-finished");
        unionRefusal.put("checkpoint_message", message);
        unionRefusal.put("checkpoint_attempts", attempts);
        unionRefusal.put("other_errors", errors);
        unionRefusal.put("src_union_subtasks", unionSubtaskStates(r));
        unionRefusal.put("note", "subtask 0 of src-union returned from run() while subtask 1 ran; Flink aborted the"
                + " checkpoints triggered then with checkpoint_message, and the subtask stayed as src_union_subtasks says");
    }

    /** checkpoint-hashmap-finished with subtask 0 of the src-union vertex FINISHED, in Flink's own format. */
    @SuppressWarnings("unchecked")
    static Path unionPartlyFinished(Path from) throws Exception {
        org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata md;
        try (java.io.InputStream in = Files.newInputStream(from.resolve("_metadata"))) {
            md = org.apache.flink.runtime.checkpoint.Checkpoints.loadCheckpointMetadata(new java.io.DataInputStream(in),
                    Main.class.getClassLoader(), from.toString());
        }
        Map<String, Object> side = sidecars.get("checkpoint-hashmap-finished");
        List<String> ids = new ArrayList<>();
        for (Object o : (List<?>) ((Map<?, ?>) side.get("job")).get("operators")) {
            Map<?, ?> m = (Map<?, ?>) o;
            if ("src-union".equals(m.get("uid")) || "rules-filter".equals(m.get("uid"))) ids.add((String) m.get("id"));
        }
        int n = 0;
        for (org.apache.flink.runtime.checkpoint.OperatorState os : md.getOperatorStates()) {
            if (!ids.contains(os.getOperatorID().toHexString())) continue;
            os.putState(0, org.apache.flink.runtime.checkpoint.FinishedOperatorSubtaskState.INSTANCE);
            n++;
        }
        if (n == 0) throw new IllegalStateException("no src-union operator state in " + from);
        Path dir = out.resolve("checkpoint-union-partly-finished");
        Files.createDirectories(dir);
        try (java.io.OutputStream os = Files.newOutputStream(dir.resolve("_metadata"))) {
            org.apache.flink.runtime.checkpoint.Checkpoints.storeCheckpointMetadata(md, os);
        }
        Map<String, Object> contents = new TreeMap<>((Map<String, Object>) side.get("contents"));
        contents.remove("src-union/0");
        artifact((String) side.get("backend"), (String) side.get("job_id"), (Map<String, Object>) side.get("job"),
                "checkpoint-union-partly-finished", "checkpoint", dir, contents,
                "constructed: checkpoint-hashmap-finished with subtask 0 of the src-union vertex (src-union, rules-filter)"
                        + " FINISHED, written by Flink's Checkpoints.storeCheckpointMetadata; Flink itself never completes"
                        + " such a checkpoint (refusals/union-partly-finished.json)");
        return dir;
    }
    static String inFlightRestore;

    /** Restore dir onto the job as it now is, which Flink refuses: record Flink's message and the graph. */
    static void refused(String name, String artifact, Path dir, Map<String, Integer> p) throws Exception {
        Ctl.reset();
        Ctl.emit = false;
        Configuration c = jobConf("refused", "hashmap");
        c.set(StateRecoveryOptions.SAVEPOINT_PATH, dir.toUri().toString());
        c.set(org.apache.flink.configuration.ConfigOptions.key("restart-strategy.type").stringType().noDefaultValue(), "none");
        String message = null;
        Map<String, Object> graph = null;
        try {
            Run r = new Run("refused-" + name, "hashmap", c, p);
            graph = r.jobGraph;
            r.client.getJobExecutionResult().get(90, TimeUnit.SECONDS);
        } catch (Exception e) {
            for (Throwable t = e; t != null && message == null; t = t.getCause()) {
                if (t.getMessage() != null && t.getMessage().startsWith("Failed to rollback to checkpoint/savepoint")) message = t.getMessage();
            }
            if (message == null) throw new IllegalStateException("restore " + name + ": not Flink's refusal", e);
        }
        if (message == null) throw new IllegalStateException("restore " + name + ": Flink did not refuse it");
        Path sc = out.resolve("refusals").resolve(name + ".json");
        Json.save(sc, Json.obj("name", name, "artifact", artifact, "path", out.relativize(dir).toString(),
                "savepoint_uri", dir.toUri().toString(), "message", message, "graph", graph));
        refusals.add(Json.obj("name", name, "sidecar", out.relativize(sc).toString()));
        Ctl.reset();
    }

    static String restore(String artifact, Path dir, String backend, Map<String, Integer> p) throws Exception {
        return restore(artifact, dir, backend, p, true, null);
    }

    static String restore(String artifact, Path dir, String backend, Map<String, Integer> p, boolean listed) throws Exception {
        return restore(artifact, dir, backend, p, listed, null);
    }

    /** Restore dir at parallelisms p; every operator reports; the sidecar (listed in index.json if listed). */
    static String restore(String artifact, Path dir, String backend, Map<String, Integer> p, boolean listed,
            String variant) throws Exception {
        boolean allowNonRestored = "missing-uid-allowed".equals(variant);
        // with allowNonRestoredState the broadcast operator (new uid) may report nothing restored
        Map<String, Object> r = restoreReports(artifact, dir, backend, p, allowNonRestored,
                allowNonRestored ? java.util.Set.of("broadcast") : java.util.Set.of());
        String name = artifact + (variant == null ? "-to-" + p.get("keyed") : "-" + variant);
        Path sc = out.resolve("restores").resolve(name + ".json");
        Json.save(sc, Json.obj("artifact", artifact, "path", out.relativize(dir).toString(),
                "parallelism", r.get("parallelism"), "allow_non_restored_state", allowNonRestored, "job", r.get("job"),
                "graph", r.get("graph"), "reports", r.get("reports")));
        if (listed) restores.add(Json.obj("name", name, "artifact", artifact, "sidecar", out.relativize(sc).toString()));
        return out.relativize(sc).toString();
    }

    /** The operators that report their restored state, and the parallelism key of each. */
    static final String[][] REPORTING = {{"src-union", "src-union"}, {"src-finishing", "src-finishing"},
            {"map-list", "chain"}, {"keyed", "keyed"}, {"broadcast", "broadcast"}};

    /** A restore Flink did not run: its failure, Flink's own exception (refusal or failed task) as cause. */
    static final class RestoreFailed extends Exception {
        RestoreFailed(String what, Throwable cause) {
            super(what, cause);
        }
    }

    /** Why the job failed, as its execution result says (Flink's exception chain). */
    static Throwable failure(Run r) {
        try {
            r.client.getJobExecutionResult().get(60, TimeUnit.SECONDS);
            return null;
        } catch (Exception e) {
            return e;
        }
    }

    /**
     * Restore dir at parallelisms p onto the job as StateJob now builds it (its uids and the operators
     * left out), emitting nothing, and collect what every operator reports from initializeState.  The
     * operators in optional may report nothing (their state dropped); the others must all report.
     * {"parallelism", "job", "graph", "reports"}; RestoreFailed when Flink refuses or the job fails.
     */
    @SuppressWarnings("unchecked")
    static Map<String, Object> restoreReports(String artifact, Path dir, String backend, Map<String, Integer> p,
            boolean allowNonRestored, java.util.Set<String> optional) throws Exception {
        return restoreReports(artifact, dir.toUri().toString(), backend, p, allowNonRestored, optional);
    }

    /** The same, of the savepoint or checkpoint at pointer (a URI: file:, s3:). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> restoreReports(String artifact, String pointer, String backend, Map<String, Integer> p,
            boolean allowNonRestored, java.util.Set<String> optional) throws Exception {
        Ctl.reset();
        Ctl.emit = false;
        Configuration c = jobConf("restore", backend);
        c.set(StateRecoveryOptions.SAVEPOINT_PATH, pointer);
        // a restore that fails must not be retried: its reports would mix two attempts
        c.set(org.apache.flink.configuration.ConfigOptions.key("restart-strategy.type").stringType().noDefaultValue(), "none");
        if (allowNonRestored) c.set(StateRecoveryOptions.SAVEPOINT_IGNORE_UNCLAIMED_STATE, true);
        Run r;
        try {
            r = new Run("restore", backend, c, p);
        } catch (Exception e) {
            Ctl.reset();
            throw new RestoreFailed("restore of " + artifact + ": Flink refused the job", e);
        }
        int least = 0;
        for (String[] op : REPORTING) {
            if (!optional.contains(op[0]) && !StateJob.without.contains(op[0])) least += p.get(op[1]);
        }
        final int expect0 = least;
        try {
            waitFor("every operator's restore report (" + expect0 + ")", () -> {
                if (r.status() == JobStatus.FAILED) throw new IllegalStateException("restore of " + artifact + " failed");
                return Ctl.restored.size() >= expect0;
            });
        } catch (IllegalStateException e) {
            if (r.status() != JobStatus.FAILED) throw e;
            Throwable why = failure(r);
            Ctl.reset();
            throw new RestoreFailed("restore of " + artifact + " failed", why);
        }
        int expect = least;
        // an operator whose state was dropped may still report (empty): give it the time the others took
        if (!optional.isEmpty()) Thread.sleep(1000);
        r.cancel();
        if (!optional.isEmpty()) expect = Ctl.restored.size();
        if (Ctl.restored.size() != expect) throw new IllegalStateException("restore of " + artifact + ": "
                + Ctl.restored.size() + " reports, expected " + expect);
        List<Map<String, Object>> reports = new ArrayList<>(Ctl.restored);
        for (Map<String, Object> m : reports) {
            if (!m.containsKey("keys")) continue;
            List<?> range = (List<?>) m.get("key_groups");
            for (Object k : ((Map<?, ?>) m.get("keys")).values()) {
                int g = (Integer) ((Map<?, ?>) k).get("key_group");
                if (g < (Integer) range.get(0) || g > (Integer) range.get(1))
                    throw new IllegalStateException("restore of " + artifact + ": key group " + g + " outside " + range);
            }
        }
        reports.sort(Comparator.comparing((Map<String, Object> m) -> (String) m.get("uid"))
                .thenComparing(m -> (Integer) m.get("subtask")));
        Map<String, Object> par = new TreeMap<>();
        for (Map<String, Object> o : (List<Map<String, Object>>) (List<?>) r.job.get("operators")) {
            par.put(o.get("uid") == null ? (String) o.get("id") : (String) o.get("uid"), o.get("parallelism"));
        }
        Ctl.reset();
        return Json.obj("parallelism", par, "job", r.job, "graph", r.jobGraph, "reports", reports);
    }
}
