package ckpt.flink;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.OperatorTransformation;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.state.api.functions.KeyedStateBootstrapFunction;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;

import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * t/bench only (never run by the harness's Main): the State Processor API doing the rewrite that
 * ckpt-merge --canonical and --max-parallelism do, on the state BenchState writes (operators
 * "by-string" and "by-long", each key a ValueState<Long> "count" and a ListState<Long> "events"):
 * every key of both operators read with SavepointReader (RocksDB, or the heap backend for a
 * canonical savepoint) and written with SavepointWriter as a new canonical savepoint at max
 * parallelism MAXPAR (bootstrapped in RocksDB, as BenchState write does: the canonical format is
 * the same).  The job's reference for issue 40's benchmarks: JVM start included, one process.
 *
 *   SpaRewrite IN OUT MAXPAR [rocksdb]   IN a savepoint or checkpoint directory (its _metadata's);
 *                                        rocksdb: read with EmbeddedRocksDBStateBackend (a RocksDB
 *                                        checkpoint), else HashMapStateBackend; prints
 *                                        "keys N rewrite-ms T"
 */
public final class SpaRewrite {
    private SpaRewrite() {}

    public static void main(String[] args) throws Exception {
        String in = Paths.get(args[0]).toAbsolutePath().toUri().toString();
        String out = Paths.get(args[1]).toAbsolutePath().toUri().toString();
        int maxPar = Integer.parseInt(args[2]);
        boolean rocksdb = args.length > 3 && args[3].equals("rocksdb");
        // long GC pauses of a big heap must not count as a lost TaskManager; the writer bootstraps in RocksDB
        Configuration conf = Configuration.fromMap(Map.of("heartbeat.timeout", "3600000", "state.backend.type", "rocksdb"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(BenchState.PARALLELISM);
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        long start = System.nanoTime();
        SavepointReader sp = rocksdb ? SavepointReader.read(env, in) : SavepointReader.read(env, in, new HashMapStateBackend());
        DataStream<Tuple2<String, long[]>> s = sp.readKeyedState(OperatorIdentifier.forUid("by-string"), new Read<String>(),
                Types.STRING, entries(Types.STRING));
        DataStream<Tuple2<Long, long[]>> l = sp.readKeyedState(OperatorIdentifier.forUid("by-long"), new Read<Long>(),
                Types.LONG, entries(Types.LONG));
        SavepointWriter.newSavepoint(env, maxPar)
                .withOperator(OperatorIdentifier.forUid("by-string"), OperatorTransformation.bootstrapWith(s)
                        .keyBy(t -> t.f0, Types.STRING).transform(new Write<String>()))
                .withOperator(OperatorIdentifier.forUid("by-long"), OperatorTransformation.bootstrapWith(l)
                        .keyBy(t -> t.f0, Types.LONG).transform(new Write<Long>()))
                .write(out);
        env.execute("ckpt-spa-rewrite");
        System.out.println("rewrite-ms " + (System.nanoTime() - start) / 1000000);
    }

    private static <K> TypeInformation<Tuple2<K, long[]>> entries(TypeInformation<K> key) {
        return Types.TUPLE(key, Types.PRIMITIVE_ARRAY(Types.LONG));
    }

    /** A key's state as one record: the count first, then the events. */
    public static final class Read<K> extends KeyedStateReaderFunction<K, Tuple2<K, long[]>> {
        private transient ValueState<Long> count;
        private transient ListState<Long> events;

        private void init() {
            if (count != null) return;
            count = getRuntimeContext().getState(BenchState.count());
            events = getRuntimeContext().getListState(BenchState.events());
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
        public void readKey(K key, Context ctx, Collector<Tuple2<K, long[]>> out) throws Exception {
            List<Long> e = new ArrayList<>();
            for (Long v : events.get()) e.add(v);
            long[] a = new long[e.size() + 1];
            Long c = count.value();
            if (c == null) throw new IllegalStateException("no count for key " + key);
            a[0] = c;
            for (int i = 0; i < e.size(); i++) a[i + 1] = e.get(i);
            out.collect(Tuple2.of(key, a));
        }
    }

    /** The record back into the two states, under the new max parallelism's key groups. */
    public static final class Write<K> extends KeyedStateBootstrapFunction<K, Tuple2<K, long[]>> {
        private transient ValueState<Long> count;
        private transient ListState<Long> events;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(BenchState.count());
            events = getRuntimeContext().getListState(BenchState.events());
        }

        @Override
        public void processElement(Tuple2<K, long[]> t, Context ctx) throws Exception {
            count.update(t.f1[0]);
            List<Long> e = new ArrayList<>(t.f1.length - 1);
            for (int i = 1; i < t.f1.length; i++) e.add(t.f1[i]);
            events.update(e);
        }
    }
}
