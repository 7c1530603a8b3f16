package ckpt.flink;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What Flink's State Processor API (SavepointReader) reads back from a savepoint: the list, union
 * and broadcast state and the keyed value / list / map / reducing state and timers the job put there.
 * The sidecar's "spa" (see README); the expected contents come from Flink's own readers.
 */
public final class Spa {
    private Spa() {}

    private static DataStream<String> tag(DataStream<String> s, String uid, String name) {
        return s.map(v -> uid + "\t" + name + "\t" + v).returns(Types.STRING).name("tag-" + uid);
    }

    /** {"src-union": {"union-offsets": [...]}, ..., "broadcast": {"rules": {...}}, "keyed": {"keys": {...}}}. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> read(MiniCluster mc, Path savepoint) throws Exception {
        StreamExecutionEnvironment env = new TestStreamEnvironment(mc, new Configuration(), 1,
                Collections.emptyList(), Collections.emptyList());
        SavepointReader sp = SavepointReader.read(env, savepoint.toUri().toString(), new HashMapStateBackend());
        DataStream<String> all = tag(sp.readUnionState(OperatorIdentifier.forUid("src-union"), "union-offsets", Types.STRING),
                "src-union", "union-offsets");
        all = all.union(
                tag(sp.readListState(OperatorIdentifier.forUid("src-finishing"), "positions", Types.STRING), "src-finishing", "positions"),
                tag(sp.readListState(OperatorIdentifier.forUid("src-done"), "done", Types.STRING), "src-done", "done"),
                tag(sp.readListState(OperatorIdentifier.forUid("map-list"), "buffer", Types.STRING), "map-list", "buffer"),
                sp.readBroadcastState(OperatorIdentifier.forUid("broadcast"), "rules", Types.STRING, Types.LONG)
                        .map(t -> "broadcast\trules\t" + t.f0 + "\t" + t.f1).returns(Types.STRING).name("tag-broadcast"),
                sp.readKeyedState(OperatorIdentifier.forUid("keyed"), new KeyedReader(), Types.LONG, Types.STRING));
        Map<String, Object> out = new TreeMap<>();
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<String> it = all.executeAndCollect("ckpt-spa-" + savepoint.getFileName())) {
            it.forEachRemaining(lines::add);
        }
        for (String l : lines) {
            String[] f = l.split("\t", 4);
            Map<String, Object> op = (Map<String, Object>) out.computeIfAbsent(f[0], k -> new TreeMap<>());
            if (f[0].equals("broadcast")) {
                ((Map<String, Object>) op.computeIfAbsent(f[1], k -> new TreeMap<>())).put(f[2], Long.parseLong(f[3]));
            } else if (f[0].equals("keyed")) {
                ((Map<String, Object>) op.computeIfAbsent("keys", k -> new TreeMap<>()))
                        .put(f[2], Main.JSON.readValue(f[3], java.util.LinkedHashMap.class));
            } else {
                ((List<Object>) op.computeIfAbsent(f[1], k -> new ArrayList<>())).add(f[2]);
            }
        }
        for (Object op : out.values()) {
            for (Object v : ((Map<String, Object>) op).values()) if (v instanceof List) ((List<String>) v).sort(null);
        }
        // a reader that read nothing fails the harness
        for (String uid : List.of("src-union", "src-finishing", "src-done", "map-list", "broadcast", "keyed")) {
            if (!out.containsKey(uid)) throw new IllegalStateException("State Processor API read nothing of " + uid + " in " + savepoint);
        }
        return out;
    }

    /** fromExistingSavepoint(from), edited, written to to: the State Processor API's own rewrite. */
    public static void write(MiniCluster mc, Path from, Path to,
            java.util.function.UnaryOperator<SavepointWriter> edit) throws Exception {
        StreamExecutionEnvironment env = new TestStreamEnvironment(mc, new Configuration(), 1,
                Collections.emptyList(), Collections.emptyList());
        SavepointWriter w = SavepointWriter.fromExistingSavepoint(env, from.toUri().toString(), new HashMapStateBackend());
        edit.apply(w).write(to.toUri().toString());
        env.execute("ckpt-spa-write-" + to.getFileName());
        if (!java.nio.file.Files.exists(to.resolve("_metadata"))) throw new IllegalStateException("State Processor API wrote no " + to + "/_metadata");
    }

    static List<String> timers(Set<Long> s) {
        List<Long> l = new ArrayList<>(s);
        l.sort(null);
        List<String> r = new ArrayList<>();
        for (Long t : l) r.add(String.valueOf(t));
        return r;
    }

    /** The keyed operator's state per key, in the job's descriptors; timers of its "user-timers" service. */
    public static final class KeyedReader extends KeyedStateReaderFunction<Long, String> {
        private transient ValueState<Long> count;
        private transient ListState<Long> multiples;
        private transient MapState<String, Long> bySource;
        private transient ReducingState<Long> sum;

        private void init() {
            if (count != null) return;
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            multiples = getRuntimeContext().getListState(new ListStateDescriptor<>("multiples-of-3", Types.LONG));
            bySource = getRuntimeContext().getMapState(new MapStateDescriptor<>("by-source", Types.STRING, Types.LONG));
            sum = getRuntimeContext().getReducingState(new ReducingStateDescriptor<>("sum", Long::sum, Types.LONG));
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
        public void readKey(Long key, Context ctx, Collector<String> out) throws Exception {
            List<Long> ml = StateJob.all(multiples.get());
            ml.sort(null);
            Map<String, Object> bs = new TreeMap<>();
            for (Map.Entry<String, Long> e : bySource.entries()) bs.put(e.getKey(), e.getValue());
            out.collect("keyed\tkeys\t" + key + "\t" + Json.write(Json.obj("count", count.value(), "multiples-of-3", ml,
                    "by-source", bs, "sum", sum.get(), "event_timers", timers(ctx.registeredEventTimeTimers()),
                    "processing_timers", timers(ctx.registeredProcessingTimeTimers()))));
        }
    }
}
