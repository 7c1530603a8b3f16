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
    private static Path out;
    private static MiniCluster mc;
    private static URI rest;
    private static final List<Object> artifacts = new ArrayList<>();
    private static final List<Object> restores = new ArrayList<>();
    private static final List<Object> restCaptures = new ArrayList<>();
    private static final HttpClient http = HttpClient.newHttpClient();

    public static void main(String[] args) throws Exception {
        out = Paths.get(args[0]).toAbsolutePath();
        String version = org.apache.flink.runtime.util.EnvironmentInformation.getVersion();
        if (Files.exists(out)) FileUtils.deleteDirectory(out.toFile());
        Files.createDirectories(out);
        long t0 = System.nanoTime();
        Configuration cc = new Configuration();
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
        try {
            if (!System.getProperty("ckpt.only", "").equals("batch")) streaming();
            if (args.length > 1 && args[1].equals("batch")) Batch.run(mc, out);
        } finally {
            mc.close();
        }
        Json.save(out.resolve("index.json"), Json.obj("flink_version", version, "artifacts", artifacts,
                "restores", restores, "refusals", refusals, "in_flight_restore", inFlightRestore, "rest", restCaptures,
                "batch", Files.exists(out.resolve("batch/sidecar.json")) ? "batch/sidecar.json" : null,
                "seconds", (System.nanoTime() - t0) / 1_000_000_000L));
        System.out.println("flink " + version + ": " + artifacts.size() + " artifacts, " + restores.size()
                + " restores, " + restCaptures.size() + " REST captures in " + out);
    }

    static Configuration jobConf(String run, String backend) {
        Configuration c = new Configuration();
        c.set(StateBackendOptions.STATE_BACKEND, backend);
        c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, out.resolve("checkpoints").resolve(run).toUri().toString());
        c.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        c.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofHours(1));
        c.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 10);
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
            client.cancel().get(60, TimeUnit.SECONDS);
            waitFor("job " + name + " cancelled", () -> status().isGloballyTerminalState());
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
                edges.add(Json.obj("source", e.getSource().getProducer().getID().toString(), "target", v.getID().toString(),
                        "distribution", e.getDistributionPattern().toString().toLowerCase(java.util.Locale.ROOT),
                        "partition", e.getSource().getResultType().toString().toLowerCase(java.util.Locale.ROOT)));
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
        waitFor("every record through the job", () -> Ctl.keyedSeen.get() == n && Ctl.broadcastSeen.get() == n
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
        Map<String, Object> side = Json.obj("artifact", name, "kind", kind, "backend", r.backend,
                "path", out.relativize(dir).toString(), "job_id", r.id.toString(), "note", note,
                "metadata", Meta.read(dir.resolve("_metadata")), "job", r.job, "contents", contents);
        Path sc = out.resolve("sidecars").resolve(name + ".json");
        Json.save(sc, side);
        artifacts.add(Json.obj("name", name, "kind", kind, "path", out.relativize(dir).toString(),
                "sidecar", out.relativize(sc).toString()));
    }

    static Path savepoint(Run r, String name, SavepointFormatType fmt) throws Exception {
        Ctl.contents.clear();
        String p = mc.triggerSavepoint(r.id, out.resolve("tmp").toUri().toString(), false, fmt).get(90, TimeUnit.SECONDS);
        Path dir = out.resolve(name);
        Files.move(local(p), dir);
        artifact(r, name, "savepoint", dir, contents(), null);
        return dir;
    }

    static Path checkpoint(Run r, String name, boolean keepContents, String note) throws Exception {
        Ctl.contents.clear();
        String p;
        try {
            p = mc.triggerCheckpoint(r.id).get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            System.err.println("checkpoint of " + r.name + " timed out: " + get("/jobs/" + r.id + "/checkpoints"));
            throw e;
        }
        Path dir = local(p);
        if (name != null) artifact(r, name, "checkpoint", dir, keepContents ? contents() : null, note);
        return dir;
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
        // the job graph Flink generated for this job, in ckpt-graph(5)'s words: the oracle for ckpt-plan -g
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

        Path cpu = unaligned(p);
        Ctl.reset();

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
        StateJob.broadcastUid = "broadcast-v2";
        refused("missing-uid", "savepoint-hashmap-canonical", spCanonical, p);
        StateJob.broadcastUid = "broadcast";
        StateJob.maxParallelism = 64;
        refused("max-parallelism", "savepoint-hashmap-canonical", spCanonical, p);
        StateJob.maxParallelism = StateJob.MAX_PARALLELISM;
        if (cpu == null) throw new IllegalStateException("no unaligned checkpoint");
    }

    /** Unaligned under back-pressure: the sources flood, the keyed operator is slow. */
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
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (path == null) {
            if (System.nanoTime() > end) throw new IllegalStateException("no unaligned checkpoint with channel state: "
                    + get("/jobs/" + un.id + "/checkpoints"));
            Thread.sleep(200);
            var c = JSON.readTree(get("/jobs/" + un.id + "/checkpoints")).path("latest").path("completed");
            if (c.path("checkpoint_type").asText().equals("UNALIGNED_CHECKPOINT") && c.path("persisted_data").asLong() > 0) {
                path = c.path("external_path").asText();
            }
        }
        un.cancel();
        Path cpu = local(path);
        artifact(un, "checkpoint-unaligned", "checkpoint", cpu, null,
                "periodic unaligned checkpoint under back-pressure; contents not fixed (the sources flood)");
        Ctl.reset();
        return cpu;
    }

    static final List<Object> refusals = new ArrayList<>();
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
        return restore(artifact, dir, backend, p, true);
    }

    /** Restore dir at parallelisms p; every operator reports; the sidecar (listed in index.json if listed). */
    static String restore(String artifact, Path dir, String backend, Map<String, Integer> p, boolean listed) throws Exception {
        Ctl.reset();
        Ctl.emit = false;
        Configuration c = jobConf("restore", backend);
        c.set(StateRecoveryOptions.SAVEPOINT_PATH, dir.toUri().toString());
        // a restore that fails must not be retried: its reports would mix two attempts
        c.set(org.apache.flink.configuration.ConfigOptions.key("restart-strategy.type").stringType().noDefaultValue(), "none");
        Run r = new Run("restore", backend, c, p);
        int expect = p.get("src-union") + p.get("src-finishing") + p.get("chain") + p.get("keyed") + p.get("broadcast");
        waitFor("every operator's restore report (" + expect + ")", () -> {
            if (r.status() == JobStatus.FAILED) throw new IllegalStateException("restore of " + artifact + " failed");
            return Ctl.restored.size() >= expect;
        });
        r.cancel();
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
        String name = artifact + "-to-" + p.get("keyed");
        Path sc = out.resolve("restores").resolve(name + ".json");
        Json.save(sc, Json.obj("artifact", artifact, "path", out.relativize(dir).toString(),
                "parallelism", par, "job", r.job, "reports", reports));
        if (listed) restores.add(Json.obj("name", name, "artifact", artifact, "sidecar", out.relativize(sc).toString()));
        Ctl.reset();
        return out.relativize(sc).toString();
    }
}
