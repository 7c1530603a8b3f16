package ckpt.flink;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.connectors.kafka.FlinkKafkaConsumer;
import org.apache.flink.streaming.connectors.kafka.KafkaDeserializationSchema;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.FileUtils;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * FlinkKafkaConsumer (flink-connector-kafka 3.4.0-1.20, the last line that ships it; issue 41) over
 * KafkaJob's topic ckpt-in, parallelism 2, uid kafka-consumer, from the earliest offsets, into a
 * discarding sink:
 *
 *   kafka-consumer savepoint DIR OUT.json   a fresh broker holding KafkaJob's records (10, 20, 30, 0);
 *                                           the job reads them all, a canonical savepoint goes to DIR
 *                                           (hashmap), OUT.json says what it consumed per partition
 *   kafka-consumer restore OUT.json DIR [OUT.json DIR]...
 *                                           a fresh broker holding those records and 5 more in each
 *                                           partition; the job restored from each DIR in turn, and
 *                                           OUT.json holds the first offset each partition delivered
 */
final class KafkaConsumerJob {
    static final String UID = "kafka-consumer";
    static final Map<Integer, Long> first = new ConcurrentHashMap<>();
    static final Map<Integer, Long> next = new ConcurrentHashMap<>();

    static final class Tap implements KafkaDeserializationSchema<String> {
        @Override
        public boolean isEndOfStream(String s) {
            return false;
        }

        @Override
        public String deserialize(ConsumerRecord<byte[], byte[]> r) {
            first.putIfAbsent(r.partition(), r.offset());
            next.merge(r.partition(), r.offset() + 1, Math::max);
            return new String(r.value(), StandardCharsets.UTF_8);
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }

    static StreamGraph graph(Configuration c, String bootstrap) {
        StreamExecutionEnvironment env = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList());
        env.setMaxParallelism(StateJob.MAX_PARALLELISM);
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", bootstrap);
        p.setProperty("group.id", KafkaJob.GROUP + "-consumer");
        FlinkKafkaConsumer<String> src = new FlinkKafkaConsumer<>(KafkaJob.TOPIC, new Tap(), p);
        src.setStartFromEarliest();
        env.addSource(src, UID).uid(UID).setParallelism(KafkaJob.KAFKA_PARALLELISM)
                .addSink(new DiscardingSink<>()).name("discard").uid("discard").setParallelism(1);
        StreamGraph sg = env.getStreamGraph();
        sg.setJobName("ckpt-kafka-consumer");
        return sg;
    }

    static int usage(String why) {
        System.err.println("usage: ckpt.flink.Main kafka-consumer savepoint DIR OUT.json | restore OUT.json DIR [OUT.json DIR]... ("
                + why + ")");
        return 2;
    }

    static int main(String[] args) throws Exception {
        boolean save = args.length == 4 && args[1].equals("savepoint");
        if (!save && !(args.length >= 4 && args.length % 2 == 0 && args[1].equals("restore"))) return usage("bad arguments");
        Path scratch = Files.createTempDirectory("ckpt-kafka-consumer");
        try (KafkaBroker broker = KafkaBroker.withCluster()) {
            if (save) {
                KafkaJob.topics(broker.bootstrap, KafkaJob.RECORDS.length, 0);
                savepoint(broker, Paths.get(args[2]).toAbsolutePath(), Paths.get(args[3]).toAbsolutePath(), scratch);
            } else {
                KafkaJob.topics(broker.bootstrap, KafkaJob.RECORDS.length, KafkaJob.EXTRA);
                for (int i = 2; i < args.length; i += 2)
                    restore(broker, Paths.get(args[i]).toAbsolutePath(), Paths.get(args[i + 1]).toAbsolutePath(), scratch);
            }
        } finally {
            if (Main.mc != null) Main.mc.close();
            FileUtils.deleteDirectory(scratch.toFile());
        }
        return 0;
    }

    static boolean consumed() {
        for (int p = 0; p < KafkaJob.RECORDS.length; p++)
            if (KafkaJob.RECORDS[p] > 0 && next.getOrDefault(p, 0L) != KafkaJob.RECORDS[p]) return false;
        return true;
    }

    static void cancel(JobClient client) throws Exception {
        client.cancel().get(60, TimeUnit.SECONDS);
        Main.waitFor("the consumer job cancelled", () -> {
            try {
                return client.getJobStatus().get(10, TimeUnit.SECONDS).isGloballyTerminalState();
            } catch (Exception e) {
                return true;
            }
        });
    }

    static void savepoint(KafkaBroker broker, Path dir, Path out, Path scratch) throws Exception {
        first.clear();
        next.clear();
        Configuration c = KafkaJob.conf(scratch.resolve("checkpoints"), "hashmap");
        JobClient client = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList())
                .executeAsync(graph(c, broker.bootstrap));
        try {
            Main.waitFor("the consumer job read every record", KafkaConsumerJob::consumed);
            String p = Main.triggerSavepoint(client.getJobID(), scratch.resolve("tmp").toUri().toString(),
                    SavepointFormatType.CANONICAL, 90);
            Files.move(Main.local(p), dir);
        } finally {
            cancel(client);
        }
        Map<String, Object> n = new LinkedHashMap<>();
        for (int p = 0; p < KafkaJob.RECORDS.length; p++) n.put(KafkaJob.TOPIC + ":" + p, next.get(p));
        Json.save(out, Json.obj("savepoint", dir.toString(), "uid", UID, "next_offsets", n));
        System.out.println("kafka-consumer: savepoint " + dir + ", next offsets " + n);
    }

    static void restore(KafkaBroker broker, Path out, Path dir, Path scratch) throws Exception {
        first.clear();
        next.clear();
        Configuration c = KafkaJob.conf(scratch.resolve("checkpoints"), "hashmap");
        c.set(StateRecoveryOptions.SAVEPOINT_PATH, dir.toUri().toString());
        JobClient client = new TestStreamEnvironment(Main.mc, c, 1, Collections.emptyList(), Collections.emptyList())
                .executeAsync(graph(c, broker.bootstrap));
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        String failure = null;
        try {
            while (System.nanoTime() < end && first.size() < KafkaJob.RECORDS.length) {
                org.apache.flink.api.common.JobStatus st = client.getJobStatus().get(10, TimeUnit.SECONDS);
                if (st.isGloballyTerminalState()) {
                    failure = st.toString();
                    break;
                }
                Thread.sleep(50);
            }
        } finally {
            if (failure == null) cancel(client);
        }
        Map<String, Object> fo = new LinkedHashMap<>();
        for (int p = 0; p < KafkaJob.RECORDS.length; p++) fo.put(KafkaJob.TOPIC + ":" + p, first.get(p));
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("savepoint", dir.toString());
        res.put("accepted", failure == null && first.size() == KafkaJob.RECORDS.length);
        if (failure != null) res.put("message", failure);
        res.put("first_offsets", fo);
        Json.save(out, res);
        System.out.println("kafka-consumer: " + dir.getFileName() + " first offsets " + fo);
    }
}
