package ckpt.flink;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.OperatorTransformation;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.state.api.functions.KeyedStateBootstrapFunction;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.Collector;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * t/bench/flinkstate.sh only (never run by the harness's Main): writes a canonical savepoint of
 * many small keyed entries with the State Processor API (SavepointWriter; the state is bootstrapped
 * in RocksDB, whose canonical savepoint is the same format as the heap backend's, because a heap
 * holding 1 GiB of small entries needs several times that in Java objects and stalls in GC), and
 * reads it back with SavepointReader and a HashMapStateBackend (or EmbeddedRocksDBStateBackend:
 * third argument "rocksdb"), timing the read inside the JVM.
 *
 *   BenchState write DIR KEYS   operators "by-string" (String keys) and "by-long" (Long keys),
 *                               KEYS keys each: ValueState<Long> "count", ListState<Long> "events"
 *                               (EVENTS elements)
 *   BenchState read DIR [rocksdb]  every key of both operators through a KeyedStateReaderFunction;
 *                               prints "keys N events M read-ms T"
 *   BenchState checkpoint DIR KEYS  the same state, written by a streaming job with RocksDB and
 *                               incremental checkpoints into the checkpoint directory DIR: once every
 *                               record is in state, one checkpoint is triggered and the job cancelled
 *                               (the checkpoint retained); prints its path (t/bench/rocksdb.sh)
 */
public final class BenchState {
    static final int EVENTS = 6;
    static final int PARALLELISM = 2;
    static final int MAX_PARALLELISM = 128;

    private BenchState() {}

    public static void main(String[] args) throws Exception {
        if (args[0].equals("checkpoint")) {
            checkpoint(Paths.get(args[1]).toAbsolutePath(), Long.parseLong(args[2]));
            return;
        }
        String dir = Paths.get(args[1]).toAbsolutePath().toUri().toString();
        boolean write = args[0].equals("write"), rocksdb = write || (args.length > 2 && args[2].equals("rocksdb"));
        // long GC pauses of a big heap must not count as a lost TaskManager
        Configuration conf = Configuration.fromMap(Map.of("heartbeat.timeout", "3600000", "state.backend.type",
                rocksdb ? "rocksdb" : "hashmap"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(PARALLELISM);
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        if (write) {
            long keys = Long.parseLong(args[2]);
            DataStream<Long> seq = env.fromSequence(0, keys - 1);
            SavepointWriter.newSavepoint(env, MAX_PARALLELISM)
                    .withOperator(OperatorIdentifier.forUid("by-string"), OperatorTransformation.bootstrapWith(seq)
                            .keyBy(BenchState::stringKey, Types.STRING).transform(new Boot<String>()))
                    .withOperator(OperatorIdentifier.forUid("by-long"), OperatorTransformation.bootstrapWith(seq)
                            .keyBy(BenchState::longKey, Types.LONG).transform(new Boot<Long>()))
                    .write(dir);
            env.execute("ckpt-bench-write");
            return;
        }
        long start = System.nanoTime();
        SavepointReader sp = rocksdb ? SavepointReader.read(env, dir) : SavepointReader.read(env, dir, new HashMapStateBackend());
        sp.readKeyedState(OperatorIdentifier.forUid("by-string"), new Reader<String>(), Types.STRING, Types.LONG)
                .union(sp.readKeyedState(OperatorIdentifier.forUid("by-long"), new Reader<Long>(), Types.LONG, Types.LONG))
                .sinkTo(new DiscardingSink<>());
        JobExecutionResult r = env.execute("ckpt-bench-read");
        long ms = (System.nanoTime() - start) / 1000000;
        System.out.println("keys " + r.getAccumulatorResult("keys") + " events " + r.getAccumulatorResult("events")
                + " read-ms " + ms);
    }

    /** Records put in state by the checkpoint job's writers (one JVM: the MiniCluster runs here). */
    static final AtomicLong written = new AtomicLong();

    static void checkpoint(Path dir, long keys) throws Exception {
        Configuration cc = new Configuration();
        cc.set(org.apache.flink.configuration.ConfigOptions.key("heartbeat.timeout").stringType().noDefaultValue(), "3600000");
        cc.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("512m"));
        MiniCluster mc = new MiniCluster(new MiniClusterConfiguration.Builder().setConfiguration(cc)
                .setNumTaskManagers(1).setNumSlotsPerTaskManager(PARALLELISM).build());
        mc.start();
        try {
            Configuration c = new Configuration();
            c.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
            c.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
            c.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, dir.toUri().toString());
            c.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
            c.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofHours(1));
            StreamExecutionEnvironment env = new TestStreamEnvironment(mc, c, PARALLELISM, Collections.emptyList(),
                    Collections.emptyList());
            env.setMaxParallelism(MAX_PARALLELISM);
            DataStream<Long> seq = env.addSource(new Seq(keys)).setParallelism(1);
            // a map, not a process function: no timer service, whose empty RocksDB timer state the
            // State Processor API 2.3.0 fails to restore ("Failed to restore timer state": Namespace
            // must exist)
            seq.keyBy(BenchState::stringKey, Types.STRING).map(new Write<String>()).returns(Types.LONG).uid("by-string")
                    .sinkTo(new DiscardingSink<>());
            seq.keyBy(BenchState::longKey, Types.LONG).map(new Write<Long>()).returns(Types.LONG).uid("by-long")
                    .sinkTo(new DiscardingSink<>());
            JobClient job = env.executeAsync("ckpt-bench-checkpoint");
            while (written.get() < 2 * keys) Thread.sleep(100);
            String p = mc.triggerCheckpoint(job.getJobID()).get(30, TimeUnit.MINUTES);
            job.cancel().get(60, TimeUnit.SECONDS);
            System.out.println(p.startsWith("file:") ? Paths.get(java.net.URI.create(p)) : p);
        } finally {
            mc.close();
        }
    }

    /** 0 .. n-1, then idle until cancelled (the job must run on for its checkpoint). */
    public static final class Seq extends LegacySource<Long> {
        private final long n;
        private volatile boolean running = true;

        Seq(long n) {
            this.n = n;
        }

        @Override
        protected void produce(Out<Long> out) throws Exception {
            for (long i = 0; i < n && running; i++) out.emit(i);
            while (running) Thread.sleep(20);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    /** The bootstrap's state, by a running job: count = the sequence number, events = EVENTS after it. */
    public static final class Write<K> extends org.apache.flink.api.common.functions.RichMapFunction<Long, Long> {
        private transient ValueState<Long> count;
        private transient ListState<Long> events;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(count());
            events = getRuntimeContext().getListState(events());
        }

        @Override
        public Long map(Long v) throws Exception {
            count.update(v);
            for (int j = 0; j < EVENTS; j++) events.add(v + j);
            written.incrementAndGet();
            return v;
        }
    }

    static String stringKey(Long i) {
        return String.format("key-%012d", i);
    }

    static Long longKey(Long i) {
        return i * 0x9E3779B97F4A7C15L;
    }

    static ValueStateDescriptor<Long> count() {
        return new ValueStateDescriptor<>("count", Types.LONG);
    }

    static ListStateDescriptor<Long> events() {
        return new ListStateDescriptor<>("events", Types.LONG);
    }

    /** count = the sequence number, events = EVENTS numbers after it. */
    public static final class Boot<K> extends KeyedStateBootstrapFunction<K, Long> {
        private transient ValueState<Long> count;
        private transient ListState<Long> events;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(count());
            events = getRuntimeContext().getListState(events());
        }

        @Override
        public void processElement(Long v, Context ctx) throws Exception {
            count.update(v);
            for (int j = 0; j < EVENTS; j++) events.add(v + j);
        }
    }

    /** Touches every value: counts keys and list elements into accumulators, emits each count. */
    public static final class Reader<K> extends KeyedStateReaderFunction<K, Long> {
        private transient ValueState<Long> count;
        private transient ListState<Long> events;
        private final LongCounter keys = new LongCounter(), elements = new LongCounter();

        private void init() {
            if (count != null) return;
            count = getRuntimeContext().getState(count());
            events = getRuntimeContext().getListState(events());
            getRuntimeContext().addAccumulator("keys", keys);
            getRuntimeContext().addAccumulator("events", elements);
        }

        /** Flink 2.x (and 1.20's OpenContext path). */
        public void open(OpenContext ctx) {
            init();
        }

        /** Flink 1.20 declares this one abstract. */
        public void open(Configuration c) {
            init();
        }

        @Override
        public void readKey(K key, Context ctx, Collector<Long> out) throws Exception {
            Long c = count.value();
            if (c == null) throw new IllegalStateException("no count for key " + key);
            keys.add(1);
            for (Long e : events.get()) elements.add(1);
            out.collect(c);
        }
    }
}
