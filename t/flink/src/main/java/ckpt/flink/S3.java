package ckpt.flink;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.FileSystem;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Flink writing to and restoring from an S3 server (issue 28; t/flink/s3.bats), through Flink's own S3
 * file system, flink-s3-fs-presto (the flink2 profile only; run.sh puts it in target/VERSION/
 * s3-classpath.txt, apart from the harness's class path: the jar carries unshaded Hadoop, Guava and
 * Jackson).  The server and identity come from the environment as ckpt takes them: AWS_ENDPOINT_URL,
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; path-style addressing.
 *
 * <pre>
 *   java ckpt.flink.Main s3 write OUT BUCKET
 *       StateJob (hashmap, the default parallelisms, every state in a file of its own: small-file
 *       threshold 0) with its checkpoints under s3p://BUCKET/checkpoints; once every record is
 *       through, a retained checkpoint and a canonical savepoint into s3://BUCKET/savepoints.
 *       OUT/index.json {"checkpoint": URI, "savepoint": URI}; OUT/sidecars/{checkpoint,savepoint}.json
 *       as the harness's sidecars ("metadata" read by Flink from the server, "job", "contents").
 *   java ckpt.flink.Main s3 restore OUT.json URI [OPTION...]...
 *       Restore.java's restore of the savepoint at URI (s3://...), read from the server by Flink.
 * </pre>
 */
final class S3 {
    private S3() {}

    static final String ENTROPY_KEY = "_entropy_";

    static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) throw new IllegalStateException("ckpt.flink.Main s3: " + name + " is not set");
        return v;
    }

    /**
     * flink-s3-fs-presto's options: "s3." becomes "presto.s3." (S3FileSystemFactory's
     * FLINK_CONFIG_PREFIXES), and s3.path.style.access, s3.access.key, s3.secret.key are mirrored to
     * Presto's presto.s3.path-style-access, access-key, secret-key (its MIRRORED_CONFIG_KEYS).
     */
    static Configuration conf() {
        Configuration c = new Configuration();
        set(c, "s3.endpoint", env("AWS_ENDPOINT_URL"));
        set(c, "s3.path.style.access", "true");
        set(c, "s3.access-key", env("AWS_ACCESS_KEY_ID"));
        set(c, "s3.secret-key", env("AWS_SECRET_ACCESS_KEY"));
        set(c, "s3.ssl.enabled", String.valueOf(env("AWS_ENDPOINT_URL").startsWith("https:")));
        // entropy injection (AbstractS3FileSystemFactory): in a path holding the key, state files get
        // ENTROPY_LENGTH random characters in its place, the _metadata the path without it
        set(c, "s3.entropy.key", ENTROPY_KEY);
        set(c, "s3.entropy.length", "4");
        return c;
    }

    static void set(Configuration c, String key, String value) {
        c.set(ConfigOptions.key(key).stringType().noDefaultValue(), value);
    }

    static int usage() {
        System.err.println("usage: ckpt.flink.Main s3 write OUT BUCKET | ckpt.flink.Main s3 restore OUT.json URI [OPTION...]...");
        return 2;
    }

    static int main(String[] args) throws Exception {
        if (args.length < 2) return usage();
        Configuration s3 = conf();
        // the file systems of this JVM (the MiniCluster runs in it): found on the class path
        FileSystem.initialize(s3, null);
        Main.clusterExtra.addAll(s3);
        if (args[1].equals("write") && args.length == 4) {
            write(Paths.get(args[2]).toAbsolutePath(), args[3]);
            return 0;
        }
        if (args[1].equals("restore")) return Restore.main(Arrays.copyOfRange(args, 1, args.length));
        return usage();
    }

    static void write(Path out, String bucket) throws Exception {
        Main.out = out;
        Files.createDirectories(out.resolve("sidecars"));
        long t0 = System.nanoTime();
        Main.startCluster();
        try {
            Map<String, Integer> p = StateJob.defaultParallelism();
            Ctl.reset();
            Configuration c = Main.jobConf("s3", "hashmap");
            // s3p: Presto's own scheme, which the state handles then name; entropy injected
            c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, "s3p://" + bucket + "/" + ENTROPY_KEY + "/checkpoints");
            c.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
            Main.Run r = new Main.Run("s3", "hashmap", c, p);
            Main.drained(p);
            Ctl.contents.clear();
            String cp = Main.trigger(r.id);
            Map<String, Object> cpContents = Main.contents();
            Ctl.contents.clear();
            String sp = Main.mc.triggerSavepoint(r.id, "s3://" + bucket + "/savepoints", false, SavepointFormatType.CANONICAL)
                    .get(90, TimeUnit.SECONDS);
            Map<String, Object> spContents = Main.contents();
            r.cancel();
            sidecar(out, "checkpoint", cp, r, cpContents);
            sidecar(out, "savepoint", sp, r, spContents);
            Json.save(out.resolve("index.json"), Json.obj("checkpoint", cp, "savepoint", sp, "job_id", r.id.toString(),
                    "flink_version", org.apache.flink.runtime.util.EnvironmentInformation.getVersion(),
                    "seconds", (System.nanoTime() - t0) / 1_000_000_000L));
            System.out.println("flink s3: checkpoint " + cp + ", savepoint " + sp);
        } finally {
            Main.mc.close();
        }
    }

    static void sidecar(Path out, String kind, String uri, Main.Run r, Map<String, Object> contents) throws Exception {
        Json.save(out.resolve("sidecars").resolve(kind + ".json"), Json.obj("artifact", kind, "kind", kind,
                "backend", r.backend, "path", uri, "job_id", r.id.toString(), "metadata", Meta.readUri(uri),
                "job", r.job, "contents", contents));
    }
}
