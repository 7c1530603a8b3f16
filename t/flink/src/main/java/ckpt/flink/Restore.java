package ckpt.flink;

import org.apache.flink.util.FileUtils;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The harness's restore as a command, for savepoints written outside the harness (edit.bats: those
 * ckpt-merge -o DIR/ wrote, and the State Processor API's stand-ins).  One MiniCluster for all requests:
 *
 * <pre>
 *   java ckpt.flink.Main restore OUT.json SAVEPOINT_DIR [OPTION...] [OUT.json SAVEPOINT_DIR [OPTION...]]...
 *     --uid OPERATOR=NEWUID   the job's operator OPERATOR (its uid in StateJob) carries NEWUID
 *     --without OPERATOR      the job leaves OPERATOR out (broadcast only: keyed then feeds the sink)
 *     --empty OPERATOR        OPERATOR stays, and may restore nothing (it is not waited for)
 *     --backend NAME          hashmap (default), rocksdb, forst (Flink 2.x: ForSt, its files in the
 *                             task manager's local directory) or forst-heap (the same, its timers on
 *                             the heap: state.backend.forst.timer-service.factory HEAP) or changelog
 *                             (hashmap with state.changelog.enabled: Main.changelogConf's) or
 *                             changelog-rocksdb (the same over RocksDB, incremental checkpoints)
 *     --to N                  the parallelisms of restores/NAME-to-N.json: 3 (default), 2 (the job's own), 1
 *     --max-parallelism N     the job's max parallelism (default StateJob.MAX_PARALLELISM, 32)
 * </pre>
 *
 * Each OUT.json: "metadata", what Checkpoints.loadCheckpointMetadata read from SAVEPOINT_DIR/_metadata
 * (Meta, the sidecars' shape; "metadata_error" if it could not), and the restore, always without
 * allowNonRestoredState and with emitting off: "accepted" true with "parallelism", "job", "graph" and
 * "reports" as restores/NAME-to-N.json hold them, or "accepted" false with Flink's "message" (the
 * "Failed to rollback to checkpoint/savepoint ..." refusal, else the innermost cause) and "causes".
 * Exit 0 when every OUT.json was written, 2 on a bad command line.
 */
final class Restore {
    private Restore() {}

    static final class Request {
        Path out;
        Path dir;
        /** The savepoint's URI when it is not a local path (s3://...: S3.java) */
        String uri;
        final Map<String, String> uids = new TreeMap<>();
        final Set<String> without = new TreeSet<>();
        final Set<String> empty = new TreeSet<>();
        String backend = "hashmap";
        int to = 3;
        int maxParallelism = StateJob.MAX_PARALLELISM;
    }

    static int usage(String why) {
        System.err.println("ckpt.flink.Main restore: " + why);
        System.err.println("usage: ckpt.flink.Main restore OUT.json SAVEPOINT_DIR [--uid OPERATOR=NEWUID] [--without OPERATOR]"
                + " [--empty OPERATOR] [--backend hashmap|rocksdb|forst|forst-heap|changelog|changelog-rocksdb] [--to 1|2|3] [--max-parallelism N]"
                + " [OUT.json SAVEPOINT_DIR [...]]...");
        return 2;
    }

    /** The parallelisms of the harness's restores/NAME-to-N.json (Main.streaming: p, q and one). */
    static Map<String, Integer> parallelism(int to) {
        Map<String, Integer> p = StateJob.defaultParallelism();
        if (to == 2) return p;
        if (to == 1) {
            for (String k : p.keySet()) p.put(k, 1);
            return p;
        }
        p.put("src-union", 3);
        p.put("src-finishing", 2);
        p.put("src-done", 3);
        p.put("chain", 2);
        p.put("keyed", 3);
        p.put("broadcast", 3);
        return p;
    }

    static int main(String[] args) throws Exception {
        List<Request> reqs = new ArrayList<>();
        Request cur = null;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                if (i + 1 >= args.length) return usage(a + ": no SAVEPOINT_DIR");
                cur = new Request();
                cur.out = Paths.get(a).toAbsolutePath();
                String d = args[++i];
                if (d.matches("[a-z][a-z0-9]*://.*")) {
                    cur.uri = d;
                    cur.dir = Paths.get(d.replaceFirst("/+$", "").replaceFirst(".*/", ""));
                } else {
                    cur.dir = Paths.get(d).toAbsolutePath();
                }
                reqs.add(cur);
                continue;
            }
            if (cur == null) return usage(a + " before OUT.json SAVEPOINT_DIR");
            if (i + 1 >= args.length) return usage(a + ": no value");
            String v = args[++i];
            switch (a) {
                case "--uid": {
                    int eq = v.indexOf('=');
                    if (eq <= 0 || eq == v.length() - 1) return usage("--uid " + v + ": not OPERATOR=NEWUID");
                    cur.uids.put(v.substring(0, eq), v.substring(eq + 1));
                    break;
                }
                case "--without":
                    if (!v.equals("broadcast")) return usage("--without " + v + ": only broadcast can be left out");
                    cur.without.add(v);
                    break;
                case "--empty":
                    cur.empty.add(v);
                    break;
                case "--backend":
                    if (!v.matches("hashmap|rocksdb|forst|forst-heap|changelog|changelog-rocksdb")) return usage("--backend " + v);
                    if (v.startsWith("forst") && !org.apache.flink.runtime.util.EnvironmentInformation.getVersion().startsWith("2."))
                        return usage("--backend " + v + ": Flink 2.x only (this is "
                                + org.apache.flink.runtime.util.EnvironmentInformation.getVersion() + ")");
                    cur.backend = v;
                    break;
                case "--to":
                    if (!v.matches("[123]")) return usage("--to " + v + ": 1, 2 or 3");
                    cur.to = Integer.parseInt(v);
                    break;
                case "--max-parallelism":
                    if (!v.matches("[1-9][0-9]{0,4}")) return usage("--max-parallelism " + v);
                    cur.maxParallelism = Integer.parseInt(v);
                    break;
                default:
                    return usage("unknown option " + a);
            }
        }
        if (reqs.isEmpty()) return usage("nothing to restore");
        // the restore jobs' own checkpoints go to a scratch directory
        Main.out = Files.createTempDirectory("ckpt-flink-restore");
        Main.startCluster();
        try {
            for (Request r : reqs) run(r);
        } finally {
            Main.mc.close();
            FileUtils.deleteDirectory(Main.out.toFile());
        }
        return 0;
    }

    static void run(Request q) throws Exception {
        long t0 = System.nanoTime();
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("savepoint", q.uri != null ? q.uri : q.dir.toString());
        res.put("request", Json.obj("uids", q.uids, "without", new ArrayList<>(q.without), "empty", new ArrayList<>(q.empty),
                "backend", q.backend, "to", q.to, "max_parallelism", q.maxParallelism));
        try {
            res.put("metadata", q.uri != null ? Meta.readUri(q.uri) : Meta.read(q.dir.resolve("_metadata")));
        } catch (Exception e) {
            res.put("metadata", null);
            res.put("metadata_error", causes(e).toString());
        }
        StateJob.newUids.clear();
        StateJob.newUids.putAll(q.uids);
        StateJob.without.clear();
        StateJob.without.addAll(q.without);
        StateJob.maxParallelism = q.maxParallelism;
        try {
            Map<String, Object> r = Main.restoreReports(q.dir.getFileName().toString(),
                    q.uri != null ? q.uri : q.dir.toUri().toString(), q.backend,
                    parallelism(q.to), false, q.empty);
            res.put("accepted", true);
            res.putAll(r);
        } catch (Main.RestoreFailed e) {
            res.put("accepted", false);
            res.put("message", message(e.getCause()));
            res.put("causes", causes(e.getCause()));
        } finally {
            StateJob.newUids.clear();
            StateJob.without.clear();
            StateJob.maxParallelism = StateJob.MAX_PARALLELISM;
        }
        Json.save(q.out, res);
        System.out.println(q.out + ": " + (Boolean.TRUE.equals(res.get("accepted")) ? "restored" : "refused")
                + " in " + (System.nanoTime() - t0) / 1_000_000L + " ms");
    }

    static List<Object> causes(Throwable e) {
        List<Object> l = new ArrayList<>();
        for (Throwable t = e; t != null; t = t.getCause()) l.add(String.valueOf(t));
        return l;
    }

    /** Flink's refusal ("Failed to rollback to checkpoint/savepoint ..."), else the innermost cause. */
    static String message(Throwable e) {
        String last = null;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().startsWith("Failed to rollback to checkpoint/savepoint")) return t.getMessage();
            last = String.valueOf(t);
        }
        return last;
    }
}
