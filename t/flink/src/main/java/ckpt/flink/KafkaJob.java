package ckpt.flink;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.FileSourceSplitSerializer;
import org.apache.flink.connector.file.src.PendingSplitsCheckpoint;
import org.apache.flink.connector.file.src.PendingSplitsCheckpointSerializer;
import org.apache.flink.connector.file.src.reader.SimpleStreamFormat;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumStateSerializer;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplit;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplitSerializer;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.Collector;
import org.apache.flink.util.FileUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The connector job of issue 41 (t/flink/README, kafka.bats): a KafkaSource over a topic of
 * known records, a FileSource over a directory of small files and an exactly-once KafkaSink, run
 * against a real broker (KafkaBroker) until a known point, then snapshotted.  Each artifact's
 * sidecar holds what the job consumed (the oracle: per partition the next offset) and what Flink's
 * own serializers decode from the source operators' state.  `kafka-restore` (Main) restores a
 * snapshot against a fresh broker holding the same records and reports the first record each
 * partition delivers.
 */
public final class KafkaJob {
    private KafkaJob() {}

    static final String TOPIC = "ckpt-in";
    static final String OUT_TOPIC = "ckpt-out";
    static final String TXN_PREFIX = "ckpt-kafka-sink";
    static final String GROUP = "ckpt-harness";
    /** Records per partition of TOPIC before the job runs (partition 3 empty): all are consumed. */
    static final int[] RECORDS = {10, 20, 30, 0};
    /** Records added to every partition for a restore (kafka-restore), after those. */
    static final int EXTRA = 5;
    static final int KAFKA_PARALLELISM = 2;
    /** The files of the FileSource (name, lines); the reader stops after GATE lines of the first. */
    static final String[] FILES = {"a.txt", "b.txt"};
    static final int[] LINES = {5, 7};
    static final int GATE = 3;

    // What the job's subtasks saw (the MiniCluster runs in this JVM; see Ctl)
    static final Map<Integer, Long> next = new ConcurrentHashMap<>();
    static final Map<Integer, Long> first = new ConcurrentHashMap<>();
    static final Map<Integer, Long> count = new ConcurrentHashMap<>();
    /** The reader subtask that handed on each partition's first record (its task thread's name). */
    static final Map<Integer, Integer> reader = new ConcurrentHashMap<>();
    static final Map<String, String> firstLine = new ConcurrentHashMap<>();
    static final Map<String, Integer> linesRead = new ConcurrentHashMap<>();
    static volatile boolean gateOn;
    static final AtomicBoolean gateTaken = new AtomicBoolean();
    static volatile String gatedFile;
    static volatile CountDownLatch gate = new CountDownLatch(1);

    static void reset(boolean gated) {
        next.clear();
        first.clear();
        count.clear();
        reader.clear();
        firstLine.clear();
        linesRead.clear();
        gateOn = gated;
        gateTaken.set(false);
        gatedFile = null;
        gate = new CountDownLatch(1);
    }

    /** Records every record's partition and offset as the source's emitter hands it on. */
    static final class Tap implements KafkaRecordDeserializationSchema<String> {
        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<String> out) {
            if (first.putIfAbsent(r.partition(), r.offset()) == null) {
                // the source's emitter runs in its task thread, "Source: kafka-source (K/N)#A"
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\((\\d+)/\\d+\\)")
                        .matcher(Thread.currentThread().getName());
                reader.put(r.partition(), m.find() ? Integer.parseInt(m.group(1)) - 1 : -1);
            }
            next.merge(r.partition(), r.offset() + 1, Math::max);
            count.merge(r.partition(), 1L, Long::sum);
            out.collect(new String(r.value(), StandardCharsets.UTF_8));
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }

    /**
     * Text lines, one per batch (the job sets the fetch size to one byte), whose reader holds the
     * first file it opens after GATE lines until the job is cancelled, so that the FileSource's
     * split is checkpointed mid-file.  Checkpointed positions are byte offsets of line starts.
     */
    static final class GatedLines extends SimpleStreamFormat<String> {
        @Override
        public Reader<String> createReader(Configuration config, FSDataInputStream in) throws IOException {
            long start = in.getPos();
            return new Reader<String>() {
                long pos = start;
                boolean gated;
                int emitted;
                String file;

                @Override
                public String read() throws IOException {
                    if (emitted == GATE && gateOn && (gated || gateTaken.compareAndSet(false, true))) {
                        gated = true;
                        gatedFile = file;
                        try {
                            gate.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new InterruptedIOException("cancelled at the gate");
                        }
                    }
                    ByteArrayOutputStream b = new ByteArrayOutputStream();
                    int c;
                    while ((c = in.read()) >= 0 && c != '\n') b.write(c);
                    if (c < 0 && b.size() == 0) return null;
                    pos = in.getPos();
                    emitted++;
                    String line = b.toString(StandardCharsets.UTF_8);
                    file = line.substring(0, Math.max(0, line.indexOf(':'))); // every line names its file
                    linesRead.merge(file, 1, Integer::sum);
                    return line;
                }

                @Override
                public CheckpointedPosition getCheckpointedPosition() {
                    return new CheckpointedPosition(pos, 0);
                }

                @Override
                public void close() throws IOException {
                    in.close();
                }
            };
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }


    /** Records the first line of each file the FileSource emits (firstLine). */
    static final class FirstLine implements org.apache.flink.api.common.functions.MapFunction<String, String> {
        @Override
        public String map(String s) {
            firstLine.putIfAbsent(s.substring(0, Math.max(0, s.indexOf(':'))), s);
            return s;
        }
    }

    static void build(StreamExecutionEnvironment env, String bootstrap, Path files) {
        KafkaSource<String> src = KafkaSource.<String>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(TOPIC)
                .setGroupId(GROUP)
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setDeserializer(new Tap())
                .build();
        DataStream<String> kafka = env.fromSource(src, WatermarkStrategy.noWatermarks(), "kafka-source")
                .uid("kafka-source").setParallelism(KAFKA_PARALLELISM);
        FileSource<String> fs = FileSource.forRecordStreamFormat(new GatedLines(),
                new org.apache.flink.core.fs.Path(files.toUri())).build();
        DataStream<String> lines = env.fromSource(fs, WatermarkStrategy.noWatermarks(), "file-source")
                .uid("file-source").setParallelism(1);
        Properties sinkProps = new Properties();
        sinkProps.setProperty("transaction.timeout.ms", "60000");
        KafkaSink<String> sink = KafkaSink.<String>builder()
                .setBootstrapServers(bootstrap)
                .setRecordSerializer(KafkaRecordSerializationSchema.builder().setTopic(OUT_TOPIC)
                        .setValueSerializationSchema(new SimpleStringSchema()).build())
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix(TXN_PREFIX)
                .setKafkaProducerConfig(sinkProps)
                .build();
        // each file's first line as the source emits it (after the records a restored split skips),
        // chained to the source, so that a sink slow to start cannot hide it
        DataStream<String> seen = lines.map(new FirstLine()).name("first-line").uid("first-line").setParallelism(1);
        kafka.union(seen).sinkTo(sink).name("kafka-sink").uid("kafka-sink").setParallelism(1);
    }

    /** Topics TOPIC (partitions, records: RECORDS[p] + extra each; extra alone past RECORDS) and OUT_TOPIC. */
    static void topics(String bootstrap, int partitions, int extra) throws Exception {
        Properties a = new Properties();
        a.setProperty(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(a)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, partitions, (short) 1), new NewTopic(OUT_TOPIC, 1, (short) 1)))
                    .all().get(60, TimeUnit.SECONDS);
        }
        Properties p = new Properties();
        p.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.setProperty(ProducerConfig.ACKS_CONFIG, "all");
        p.setProperty(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int part = 0; part < partitions; part++) {
                int n = (part < RECORDS.length ? RECORDS[part] : 0) + extra;
                for (int o = 0; o < n; o++) {
                    prod.send(new ProducerRecord<>(TOPIC, part, null, (TOPIC + ":" + part + ":" + o).getBytes(StandardCharsets.UTF_8)));
                }
            }
            prod.flush();
        }
    }

    static Path files(Path dir) throws IOException {
        Files.createDirectories(dir);
        for (int f = 0; f < FILES.length; f++) {
            StringBuilder b = new StringBuilder();
            for (int l = 0; l < LINES[f]; l++) b.append(FILES[f]).append(':').append(l).append('\n');
            Files.writeString(dir.resolve(FILES[f]), b.toString());
        }
        return dir;
    }

    static Configuration conf(Path checkpoints, String backend) {
        Configuration c = new Configuration();
        c.set(StateBackendOptions.STATE_BACKEND, backend);
        c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        c.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        c.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofHours(1));
        c.set(StreamFormat.FETCH_IO_SIZE, MemorySize.parse("1b"));
        return c;
    }

    static StreamGraph graph(Configuration c, String bootstrap, Path files) {
        StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList());
        env.setMaxParallelism(StateJob.MAX_PARALLELISM);
        SmallFiles.threshold(env, c);
        build(env, bootstrap, files);
        StreamGraph sg = env.getStreamGraph();
        sg.setJobName("ckpt-kafka");
        return sg;
    }

    // ---- the harness's run: artifacts under OUT/kafka/ ----

    static void run(Path out, java.util.concurrent.CompletableFuture<KafkaBroker> started) throws Exception {
        long t0 = System.nanoTime();
        Path dir = out.resolve("kafka");
        Files.createDirectories(dir.resolve("sidecars"));
        Path files = files(dir.resolve("files"));
        List<Object> artifacts = new ArrayList<>();
        try (KafkaBroker broker = started.get(120, TimeUnit.SECONDS)) {
            topics(broker.bootstrap, RECORDS.length, 0);
            // hashmap-files: the HashMap backend with state.storage.fs.memory-threshold 0 (the least
            // Flink takes: only an empty stream stays inline), so Flink itself writes every operator's
            // state, the source readers' among them, to files of their own; one canonical savepoint
            for (String run : List.of("hashmap", "rocksdb", "hashmap-files")) {
                String backend = run.startsWith("hashmap") ? "hashmap" : run;
                boolean held = run.endsWith("-files");
                reset(true);
                Configuration c = conf(dir.resolve("checkpoints").resolve(run), backend);
                if (held) c.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
                StreamGraph sg = graph(c, broker.bootstrap, files);
                Map<String, Object> job = Main.graph(sg);
                JobClient client = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList()).executeAsync(sg);
                try {
                    Main.waitFor("the connector job at its stopping point", KafkaJob::atStop);
                    System.out.println("flink kafka " + run + ": at the stopping point after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
                    Thread.sleep(1000); // the gated file's lines leave the reader's queue
                    Map<String, Object> consumed = consumed();
                    String base = "kafka-" + run;
                    for (SavepointFormatType fmt : held ? List.of(SavepointFormatType.CANONICAL)
                            : List.of(SavepointFormatType.CANONICAL, SavepointFormatType.NATIVE)) {
                        String name = base + "-" + fmt.name().toLowerCase(java.util.Locale.ROOT);
                        Path target = Main.savepoint(client, fmt, dir.resolve(name)); // triggered again while a task is not running yet
                        if (held) fileHeld(target);
                        artifacts.add(sidecar(out, dir, name, "savepoint", fmt.name().toLowerCase(java.util.Locale.ROOT), backend,
                                target, client, job, consumed, files));
                    }
                    if (!held) {
                        Path chk = Main.local(Main.trigger(client.getJobID()));
                        artifacts.add(sidecar(out, dir, base + "-checkpoint", "checkpoint", null, backend, chk, client, job, consumed, files));
                    }
                    if (!consumed.equals(consumed())) throw new IllegalStateException("the connector job read on: " + consumed());
                } finally {
                    gateOn = false;
                    gate.countDown(); // the FileSource's reader leaves the gate (its task is cancelled)
                    client.cancel().get(60, TimeUnit.SECONDS);
                    Main.waitFor("the connector job cancelled",
                            () -> { try { return client.getJobStatus().get(10, TimeUnit.SECONDS).isGloballyTerminalState(); }
                                    catch (Exception e) { return true; } });
                }
            }
        }
        Files.deleteIfExists(dir.resolve("tmp"));
        Json.save(dir.resolve("sidecar.json"), Json.obj("artifacts", artifacts, "topic", TOPIC, "records", recordsJson(RECORDS.length, 0),
                "extra_for_restore", EXTRA, "files", out.relativize(files).toString(),
                "sql_function", Json.obj("available", false, "note", SQL_NOTE),
                "seconds", (System.nanoTime() - t0) / 1_000_000_000L));
        System.out.println("flink kafka: " + artifacts.size() + " artifacts in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
    }

    /**
     * The savepoint's source reader state is in files Flink wrote (no SourceReaderState in a handle
     * inline in the _metadata), or the harness fails: what kafka.bats's file-held tests rely on.
     */
    static void fileHeld(Path sp) throws Exception {
        int n = 0;
        CheckpointMetadata md;
        try (InputStream in = Files.newInputStream(sp.resolve("_metadata"))) {
            md = Checkpoints.loadCheckpointMetadata(new DataInputStream(in), KafkaJob.class.getClassLoader(), sp.toString());
        }
        for (OperatorState os : md.getOperatorStates()) {
            for (OperatorSubtaskState st : os.getSubtaskStates().values()) {
                for (OperatorStateHandle h : st.getManagedOperatorState()) {
                    if (!h.getStateNameToPartitionOffsets().containsKey("SourceReaderState")) continue;
                    if (h.getDelegateStateHandle() instanceof org.apache.flink.runtime.state.memory.ByteStreamStateHandle)
                        throw new IllegalStateException(sp + ": source reader state inline in the _metadata ("
                                + h.getDelegateStateHandle() + ") although the memory threshold is 0");
                    n++;
                }
            }
        }
        if (n == 0) throw new IllegalStateException(sp + ": no source reader state");
    }

    static final String SQL_NOTE = "savepoint_get_kafka_offsets (FLINK-39668) is in no connector release on Maven Central"
            + " (flink-connector-kafka 5.0.0-2.2 and 3.4.0-1.20 have no such function)";

    static boolean atStop() {
        for (int p = 0; p < RECORDS.length; p++) {
            if (RECORDS[p] > 0 && next.getOrDefault(p, 0L) != RECORDS[p]) return false;
        }
        return gatedFile != null;
    }

    static Map<String, Object> recordsJson(int partitions, int extra) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int p = 0; p < partitions; p++) m.put(TOPIC + ":" + p, (p < RECORDS.length ? RECORDS[p] : 0) + extra);
        return m;
    }

    /** What the job consumed: per partition the next offset it resumes from, the file source's lines. */
    static Map<String, Object> consumed() {
        Map<String, Object> offsets = new LinkedHashMap<>();
        for (int p = 0; p < RECORDS.length; p++) {
            offsets.put(TOPIC + ":" + p, Json.obj("topic", TOPIC, "partition", p, "next_offset", next.getOrDefault(p, 0L),
                    "records", count.getOrDefault(p, 0L)));
        }
        Map<String, Object> lines = new TreeMap<>();
        lines.putAll(linesRead);
        return Json.obj("offsets", offsets, "lines_read", lines, "gated_file", gatedFile);
    }

    static Map<String, Object> sidecar(Path out, Path dir, String name, String kind, String format, String backend, Path art,
            JobClient client, Map<String, Object> job, Map<String, Object> consumed, Path files) throws Exception {
        Map<String, Object> fileInfo = new LinkedHashMap<>();
        for (int f = 0; f < FILES.length; f++) {
            Path p = files.resolve(FILES[f]);
            fileInfo.put(FILES[f], Json.obj("path", p.toString(), "lines", LINES[f], "bytes", Files.size(p)));
        }
        Map<String, Object> side = Json.obj("artifact", name, "kind", kind, "format", format, "backend", backend,
                "path", out.relativize(art).toString(), "job_id", client.getJobID().toString(),
                "uids", Json.obj("kafka_source", "kafka-source", "file_source", "file-source", "kafka_sink", "kafka-sink"),
                "kafka", Json.obj("topic", TOPIC, "partitions", RECORDS.length, "records", recordsJson(RECORDS.length, 0),
                        "group_id", GROUP, "source_parallelism", KAFKA_PARALLELISM),
                "consumed", consumed,
                "file_source", Json.obj("dir", files.toString(), "files", fileInfo, "gate_after_lines", GATE),
                "sink", Json.obj("topic", OUT_TOPIC, "transactional_id_prefix", TXN_PREFIX, "delivery_guarantee", "EXACTLY_ONCE"),
                "flink", decode(art, job),
                "sql_function", null,
                "metadata", Meta.read(art.resolve("_metadata")), "job", job);
        Path sc = dir.resolve("sidecars").resolve(name + ".json");
        Json.save(sc, side);
        return Json.obj("name", name, "kind", kind, "format", format, "backend", backend, "path", out.relativize(art).toString(),
                "sidecar", out.relativize(sc).toString());
    }

    // ---- what Flink's own serializers read from the source operators' state ----

    static Map<String, Object> decode(Path art, Map<String, Object> job) throws Exception {
        Map<String, String> ids = new TreeMap<>();
        for (Object o : (List<?>) job.get("operators")) {
            Map<?, ?> m = (Map<?, ?>) o;
            if (m.get("uid") != null) ids.put((String) m.get("id"), (String) m.get("uid"));
        }
        CheckpointMetadata md;
        try (InputStream in = Files.newInputStream(art.resolve("_metadata"))) {
            md = Checkpoints.loadCheckpointMetadata(new DataInputStream(in), KafkaJob.class.getClassLoader(), art.toString());
        }
        Map<String, Object> res = new TreeMap<>();
        for (OperatorState os : md.getOperatorStates()) {
            String uid = ids.get(os.getOperatorID().toHexString());
            if ("kafka-source".equals(uid)) {
                res.put(uid, source(os, new KafkaPartitionSplitSerializer(), KafkaJob::kafkaSplit,
                        b -> enumerator(b, new KafkaSourceEnumStateSerializer(), KafkaEnum::json)));
            } else if ("file-source".equals(uid)) {
                res.put(uid, source(os, FileSourceSplitSerializer.INSTANCE, KafkaJob::fileSplit,
                        b -> enumerator(b, new PendingSplitsCheckpointSerializer<>(FileSourceSplitSerializer.INSTANCE),
                                KafkaJob::pending)));
            }
        }
        return res;
    }

    interface Fn<A, B> {
        B apply(A a) throws Exception;
    }

    static <S> Map<String, Object> source(OperatorState os, SimpleVersionedSerializer<S> ser, Fn<S, Map<String, Object>> json,
            Fn<byte[], Object> enumerator) throws Exception {
        Map<String, Object> readers = new TreeMap<>();
        for (Map.Entry<Integer, OperatorSubtaskState> e : new TreeMap<>(os.getSubtaskStates()).entrySet()) {
            List<Object> splits = new ArrayList<>();
            for (OperatorStateHandle h : e.getValue().getManagedOperatorState()) {
                OperatorStateHandle.StateMetaInfo mi = h.getStateNameToPartitionOffsets().get("SourceReaderState");
                if (mi == null) continue;
                try (FSDataInputStream in = h.openInputStream()) {
                    for (long off : mi.getOffsets()) {
                        in.seek(off);
                        byte[] b = BytePrimitiveArraySerializer.INSTANCE.deserialize(new DataInputViewStreamWrapper(in));
                        int version = new DataInputStream(new ByteArrayInputStream(b)).readInt();
                        Map<String, Object> s = Json.obj("offset_in_state", off, "bytes", b.length, "version", version);
                        s.putAll(json.apply(SimpleVersionedSerialization.readVersionAndDeSerialize(ser, b)));
                        splits.add(s);
                    }
                }
            }
            readers.put(String.valueOf(e.getKey()), splits);
        }
        Object en = os.getCoordinatorState() == null ? null : enumerator.apply(os.getCoordinatorState().getData());
        return Json.obj("operator_id", os.getOperatorID().toHexString(), "readers", readers, "enumerator", en);
    }

    /** SourceCoordinator's framing: serde version, the enumerator serializer's version, length, bytes. */
    static <E> Map<String, Object> enumerator(byte[] b, SimpleVersionedSerializer<E> ser, Fn<E, Map<String, Object>> json)
            throws Exception {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(b));
        int serde = in.readInt();
        int version = in.readInt();
        int len = in.readInt();
        byte[] state = in.readNBytes(len);
        return Json.obj("coordinator_bytes", b.length, "coordinator_serde_version", serde, "version", version, "bytes", len,
                "trailing_bytes", in.available(), "state", json.apply(ser.deserialize(version, state)));
    }

    static Map<String, Object> kafkaSplit(KafkaPartitionSplit s) {
        return Json.obj("topic", s.getTopic(), "partition", s.getPartition(), "starting_offset", s.getStartingOffset(),
                "stopping_offset", s.getStoppingOffset().orElse(null));
    }

    static Map<String, Object> fileSplit(FileSourceSplit s) {
        CheckpointedPosition pos = s.getReaderPosition().orElse(null);
        return Json.obj("split_id", s.splitId(), "path", s.path().toString(), "offset", s.offset(), "length", s.length(),
                "modification_time", s.fileModificationTime(), "file_size", s.fileSize(),
                "hostnames", List.of(s.hostnames()),
                "position", pos == null ? null : Json.obj("offset", pos.getOffset(), "records_after_offset", pos.getRecordsAfterOffset()));
    }

    static Map<String, Object> pending(PendingSplitsCheckpoint<FileSourceSplit> c) {
        List<Object> splits = new ArrayList<>();
        for (FileSourceSplit s : c.getSplits()) splits.add(fileSplit(s));
        List<Object> done = new ArrayList<>();
        for (org.apache.flink.core.fs.Path p : c.getAlreadyProcessedPaths()) done.add(p.toString());
        return Json.obj("splits", splits, "already_processed_paths", done);
    }

    // ---- kafka-restore OUT.json SAVEPOINT_DIR [OPTION...] [OUT.json SAVEPOINT_DIR [OPTION...]]... ----

    static int usage(String why) {
        System.err.println("kafka-restore: " + why);
        System.err.println("usage: ckpt.flink.Main kafka-restore OUT.json SAVEPOINT_DIR [--partitions N] [--backend hashmap|rocksdb]"
                + " [--files DIR] [--seconds N] [--silent P]... [OUT.json SAVEPOINT_DIR [OPTION...]]...");
        return 2;
    }

    static final class Request {
        Path out;
        Path dir;
        int partitions = RECORDS.length;
        int seconds = 180;
        String backend = "hashmap";
        Path files;
        /** Partitions expected to deliver nothing: waited for SILENT_SECONDS after the others. */
        java.util.Set<Integer> silent = new java.util.TreeSet<>();
    }

    static final int SILENT_SECONDS = 5;

    /** One JVM, one MiniCluster, one broker for every request; the topic made anew when its partitions differ. */
    static int restore(String[] args) throws Exception {
        List<Request> reqs = new ArrayList<>();
        Request cur = null;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                if (i + 1 >= args.length) return usage("OUT.json " + a + " without SAVEPOINT_DIR");
                cur = new Request();
                cur.out = Paths.get(a).toAbsolutePath();
                cur.dir = Paths.get(args[++i]).toAbsolutePath();
                cur.files = cur.dir.getParent().resolve("files");
                reqs.add(cur);
                continue;
            }
            if (cur == null) return usage(a + " before OUT.json SAVEPOINT_DIR");
            if (i + 1 >= args.length) return usage(a + " needs a value");
            String v = args[++i];
            switch (a) {
                case "--partitions":
                    if (!v.matches("[1-9][0-9]?")) return usage("--partitions " + v);
                    cur.partitions = Integer.parseInt(v);
                    break;
                case "--seconds":
                    if (!v.matches("[1-9][0-9]{0,3}")) return usage("--seconds " + v);
                    cur.seconds = Integer.parseInt(v);
                    break;
                case "--backend":
                    if (!v.equals("hashmap") && !v.equals("rocksdb")) return usage("--backend " + v);
                    cur.backend = v;
                    break;
                case "--files":
                    cur.files = Paths.get(v).toAbsolutePath();
                    break;
                case "--silent":
                    if (!v.matches("[0-9][0-9]?")) return usage("--silent " + v);
                    cur.silent.add(Integer.parseInt(v));
                    break;
                default:
                    return usage("unknown option " + a);
            }
        }
        if (reqs.isEmpty()) return usage("nothing to restore");
        Path scratch = Files.createTempDirectory("ckpt-kafka-restore");
        Main.clusterExtra.set(StreamFormat.FETCH_IO_SIZE, MemorySize.parse("1b"));
        try (KafkaBroker broker = KafkaBroker.withCluster()) {
            int have = 0;
            for (Request q : reqs) {
                if (q.partitions != have) {
                    if (have > 0) dropTopics(broker.bootstrap);
                    topics(broker.bootstrap, q.partitions, EXTRA);
                    have = q.partitions;
                }
                restoreOne(q, broker, scratch);
            }
        } finally {
            if (Main.mc != null) Main.mc.close();
            FileUtils.deleteDirectory(scratch.toFile());
        }
        return 0;
    }

    /**
     * The first line of each exception Flink's REST API lists for the job (its exception history),
     * and the first line of each of its causes ("Caused by: ..."), each once.
     */
    static List<Object> causes(String job) {
        List<Object> out = new ArrayList<>();
        try {
            String doc = Main.get("/jobs/" + job + "/exceptions");
            for (int at = doc.indexOf("\"stacktrace\""); at >= 0; at = doc.indexOf("\"stacktrace\"", at + 1)) {
                int q = doc.indexOf('"', doc.indexOf(':', at + 12) + 1);
                StringBuilder line = new StringBuilder();
                boolean first = true;
                for (int k = q + 1; k < doc.length() && doc.charAt(k) != '"'; k++) {
                    char c = doc.charAt(k);
                    if (c == '\\' && k + 1 < doc.length()) {
                        c = doc.charAt(++k);
                        if (c == 'n') {
                            String l = line.toString().trim();
                            if ((first || l.startsWith("Caused by: ")) && !out.contains(l)) out.add(l);
                            first = false;
                            line.setLength(0);
                            continue;
                        }
                        if (c == 't') c = ' ';
                    }
                    line.append(c);
                }
            }
        } catch (Exception e) {
            out.add("(no exception history: " + e + ")");
        }
        return out;
    }

    static void dropTopics(String bootstrap) throws Exception {
        Properties a = new Properties();
        a.setProperty(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(a)) {
            admin.deleteTopics(List.of(TOPIC, OUT_TOPIC)).all().get(60, TimeUnit.SECONDS);
            Main.waitFor("topics deleted", () -> {
                try {
                    java.util.Set<String> names = admin.listTopics().names().get(10, TimeUnit.SECONDS);
                    return !names.contains(TOPIC) && !names.contains(OUT_TOPIC);
                } catch (Exception e) {
                    return false;
                }
            });
        }
    }

    static void restoreOne(Request q, KafkaBroker broker, Path scratch) throws Exception {
        long t0 = System.nanoTime();
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("savepoint", q.dir.toString());
        res.put("request", Json.obj("partitions", q.partitions, "backend", q.backend, "seconds", q.seconds,
                "silent", new ArrayList<Object>(q.silent)));
        res.put("records", recordsJson(q.partitions, EXTRA));
        try {
            res.put("metadata", Meta.read(q.dir.resolve("_metadata")));
        } catch (Exception e) {
            res.put("metadata", null);
            res.put("metadata_error", String.valueOf(e));
        }
        Path files = Files.isDirectory(q.files) ? q.files : files(scratch.resolve("files"));
        res.put("files", files.toString());
        reset(false);
        Configuration c = conf(scratch.resolve("checkpoints"), q.backend);
        c.set(StateRecoveryOptions.SAVEPOINT_PATH, q.dir.toUri().toString());
        StreamGraph sg = graph(c, broker.bootstrap, files);
        JobClient client = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList())
                .executeAsync(sg);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(q.seconds);
        String failure = null;
        int restarts = 0;
        org.apache.flink.api.common.JobStatus last = null;
        long quiet = 0; // when every partition but the silent ones delivered
        while (System.nanoTime() < end) {
            long heard = first.keySet().stream().filter(p -> !q.silent.contains(p)).count();
            if (heard == q.partitions - q.silent.size() && firstLine.size() == FILES.length) {
                if (q.silent.isEmpty()) break;
                if (quiet == 0) quiet = System.nanoTime();
                // partition discovery assigned the others at the enumerator's start: a silent
                // partition it found would have delivered by now
                if (System.nanoTime() - quiet > TimeUnit.SECONDS.toNanos(SILENT_SECONDS)) break;
            }
            org.apache.flink.api.common.JobStatus st = client.getJobStatus().get(10, TimeUnit.SECONDS);
            // a restart restores the same snapshot again (no checkpoint completes meanwhile): 1.20's
            // connector fails the job once on the snapshot's sink transaction, which the fresh broker
            // does not know (README)
            if (st == org.apache.flink.api.common.JobStatus.RESTARTING && last != st) restarts++;
            last = st;
            if (st.isGloballyTerminalState()) {
                failure = st.toString();
                break;
            }
            Thread.sleep(50);
        }
        res.put("seconds_to_first_records", (System.nanoTime() - t0) / 1e9);
        Thread.sleep(300);
        res.put("restarts", restarts);
        if (restarts > 0 || failure != null) res.put("causes", causes(client.getJobID().toString()));
        if (failure != null) {
            res.put("accepted", false);
            res.put("message", failure);
        } else {
            res.put("accepted", first.keySet().stream().filter(p -> !q.silent.contains(p)).count()
                    == q.partitions - q.silent.size());
        }
        Map<String, Object> fo = new LinkedHashMap<>();
        Map<String, Object> cnt = new LinkedHashMap<>();
        Map<String, Object> rd = new LinkedHashMap<>();
        for (int p = 0; p < q.partitions; p++) {
            fo.put(TOPIC + ":" + p, first.get(p));
            cnt.put(TOPIC + ":" + p, count.getOrDefault(p, 0L));
            rd.put(TOPIC + ":" + p, reader.get(p));
        }
        res.put("first_offsets", fo);
        res.put("readers", rd);
        res.put("records_read", cnt);
        res.put("first_lines", new TreeMap<>(firstLine));
        try {
            client.cancel().get(60, TimeUnit.SECONDS);
            Main.waitFor("the restored job cancelled", () -> {
                try {
                    return client.getJobStatus().get(10, TimeUnit.SECONDS).isGloballyTerminalState();
                } catch (Exception e) {
                    return true;
                }
            });
        } catch (Exception e) {
            // already over
        }
        res.put("seconds", (System.nanoTime() - t0) / 1e9);
        Json.save(q.out, res);
        System.out.println("kafka-restore: " + q.dir.getFileName() + " accepted " + res.get("accepted") + ", first offsets " + fo
                + " in " + res.get("seconds") + " s");
    }
}
