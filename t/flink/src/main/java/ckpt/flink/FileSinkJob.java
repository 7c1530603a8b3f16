package ckpt.flink;

import org.apache.flink.api.common.serialization.SimpleStringEncoder;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.filesystem.BucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.RollingPolicy;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.SimpleVersionedStringSerializer;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.DefaultRollingPolicy;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.OnCheckpointRollingPolicy;
import org.apache.flink.streaming.util.TestStreamEnvironment;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Issue 41 (filesink.bats): the FileSink's state as Flink writes it.  A legacy source (parallelism
 * 2) emits RECORDS lines a subtask ("s0-7") and then idles; chained to it a row-format FileSink
 * (SimpleStringEncoder) writes them into buckets "sub&lt;subtask&gt;-even" and "-odd" (by the line's
 * number), so every bucket is one subtask's.  Two runs, each a canonical HashMap savepoint taken
 * once every line is written:
 *
 * <pre>
 *   inprogress  DefaultRollingPolicy (1 GiB, an hour): each bucket's part file stays in progress,
 *               in the writer's state ("writer_raw_states")
 *   pending     OnCheckpointRollingPolicy: the savepoint closes each part file, its committable pending
 *               in the committer's state (a savepoint commits nothing: the files stay hidden)
 *
 *   java ckpt.flink.Main filesink-savepoint DIR   DIR/RUN/sp/savepoint-*, DIR/checkpoints/ and DIR/sidecar.json
 * </pre>
 *
 * The sidecar lists, per run, the savepoint (and the in-progress run's checkpoint after it, the
 * files unchanged) and every file under the sink's directory right after the savepoint (bucket,
 * name, absolute path, bytes): the hidden ".part-*.inprogress.*" files, in progress or pending.
 * The lines come after a first checkpoint (Flink takes one as the job starts; it would commit them).
 */
public final class FileSinkJob {
    static final int RECORDS = 30;
    static final AtomicLong written = new AtomicLong();
    /** Set once a first checkpoint has completed: the source emits nothing before. */
    static volatile boolean go;

    private FileSinkJob() {}

    public static final class Src extends LegacySource<String> {
        private volatile boolean running = true;

        @Override
        protected void produce(Out<String> out) throws Exception {
            int idx = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            while (!go && running) Thread.sleep(20);
            for (int i = 0; i < lines(idx) && running; i++) out.emit("s" + idx + "-" + i + (i % 2 == 1 ? " odd" : ""));
            while (running) Thread.sleep(20);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    /** The lines subtask idx emits (the part files' sizes all differ). */
    static int lines(int idx) {
        return RECORDS + 7 * idx;
    }

    /** "s1-4" to bucket "sub1-even"; counts what it assigns (the sink writes the line right after). */
    public static final class Buckets implements BucketAssigner<String, String> {
        @Override
        public String getBucketId(String line, Context ctx) {
            written.incrementAndGet();
            int dash = line.indexOf('-');
            int n = Integer.parseInt(line.substring(dash + 1).split(" ")[0]);
            return "sub" + line.substring(1, dash) + (n % 2 == 0 ? "-even" : "-odd");
        }

        @Override
        public SimpleVersionedSerializer<String> getSerializer() {
            return SimpleVersionedStringSerializer.INSTANCE;
        }
    }

    static Map<String, Object> run(Path dir, String name, RollingPolicy<String, String> policy) throws Exception {
        Path sink = dir.resolve(name).resolve("out");
        Files.createDirectories(sink);
        written.set(0);
        go = false;
        Configuration c = Main.jobConf("filesink-" + name, "hashmap");
        c.set(ConfigOptions.key("restart-strategy.type").stringType().noDefaultValue(), "none");
        StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList());
        env.addSource(new Src(), "src", Types.STRING).uid("src").name("src").setParallelism(2)
                .sinkTo(FileSink.forRowFormat(new org.apache.flink.core.fs.Path(sink.toUri()), new SimpleStringEncoder<String>())
                        .withBucketAssigner(new Buckets()).withRollingPolicy(policy).build())
                .uid("sink").name("sink").setParallelism(2);
        JobClient job = env.executeAsync("ckpt-filesink-" + name);
        Map<String, Object> r = new TreeMap<>();
        try {
            // Flink's first periodic checkpoint comes as the job starts: the lines after it, so that the
            // savepoint is the first snapshot to hold their part files
            checkpoint(job);
            go = true;
            Main.waitFor("every line written", () -> written.get() == lines(0) + lines(1));
            String sp = Main.triggerSavepoint(job.getJobID(), dir.resolve(name).resolve("sp").toUri().toString(),
                    SavepointFormatType.CANONICAL, 60);
            r.put("savepoint", local(sp));
            // the in-progress run: a retained checkpoint after it, the files as they were
            if (name.equals("inprogress"))
                r.put("checkpoint", checkpoint(job));
            r.put("files", list(sink));
        } finally {
            job.cancel().get(60, TimeUnit.SECONDS);
        }
        return r;
    }

    /** A checkpoint of job, retried while its JobManager initializes (and as Main.retried retries). */
    static String checkpoint(JobClient job) throws Exception {
        for (int tries = 0; ; tries++) {
            try {
                return local(Main.retried(() -> Main.mc.triggerCheckpoint(job.getJobID()).get(60, TimeUnit.SECONDS)));
            } catch (java.util.concurrent.ExecutionException e) {
                if (tries >= 300 || !String.valueOf(e.getMessage()).contains("initializing")) throw e;
                Thread.sleep(200);
            }
        }
    }

    static String local(String uri) {
        return uri.startsWith("file:") ? Path.of(java.net.URI.create(uri)).toString() : uri;
    }

    static List<Object> list(Path sink) {
        List<Object> l = new ArrayList<>();
        try (Stream<Path> s = Files.walk(sink)) {
            for (Path p : (Iterable<Path>) s.sorted()::iterator) {
                if (!Files.isRegularFile(p)) continue;
                Map<String, Object> f = new TreeMap<>();
                f.put("bucket", sink.relativize(p.getParent()).toString());
                f.put("name", p.getFileName().toString());
                f.put("path", p.toString());
                f.put("size", Files.size(p));
                l.add(f);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return l;
    }

    static int savepoint(String[] args) throws Exception {
        Path dir = Path.of(args[1]).toAbsolutePath();
        Main.out = dir; // the checkpoints in DIR/checkpoints/filesink-RUN/JOB/chk-N
        Main.startCluster();
        try {
            Map<String, Object> side = new TreeMap<>();
            side.put("inprogress", run(dir, "inprogress", DefaultRollingPolicy.builder().withMaxPartSize(MemorySize.parse("1g"))
                    .withRolloverInterval(Duration.ofHours(1)).withInactivityInterval(Duration.ofHours(1)).build()));
            side.put("pending", run(dir, "pending", OnCheckpointRollingPolicy.build()));
            side.put("flink_version", org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
            Json.save(dir.resolve("sidecar.json"), side);
        } finally {
            Main.mc.close();
        }
        return 0;
    }
}
