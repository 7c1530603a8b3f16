package ckpt.flink;

import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.ListTypeInfo;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.streaming.api.operators.AbstractUdfStreamOperator;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import java.io.Serializable;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the State Processor API reads from SqlJob's savepoint: per SQL operator (by uid) a
 * KeyedStateReaderFunction with descriptors of the types the planner gave the operator (taken
 * from the operator itself: GroupAggFunction's accumulator types, the deduplication's row type,
 * the join's input types, the Top-N's sort key and row types; the key type from the key
 * selector), every state rendered as SqlJob renders what it expects (a row as the list of its
 * fields; DECIMAL a plain string; TIMESTAMP(3) as ckpt-state(5) prints it).  The window
 * aggregate's state is in TimeWindow namespaces, which readKeyedState does not read
 * (VoidNamespace only): its entry says so.
 */
final class SqlSpa {
    private SqlSpa() {}

    /** One state of an operator: "value" or "map" (a map's value a row, a count or a list of rows). */
    static final class StateSpec implements Serializable {
        final String name;
        final String kind;
        final TypeInformation<?> key;
        final TypeInformation<?> value;

        StateSpec(String name, String kind, TypeInformation<?> key, TypeInformation<?> value) {
            this.name = name;
            this.kind = kind;
            this.key = key;
            this.value = value;
        }
    }

    static Object field(Object o, String name) throws ReflectiveOperationException {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(o);
            } catch (NoSuchFieldException e) {
                // up the hierarchy
            }
        }
        throw new NoSuchFieldException(name + " in " + o.getClass().getName());
    }

    static Object operator(StreamNode n) {
        StreamOperatorFactory<?> f = n.getOperatorFactory();
        Object op = ((SimpleOperatorFactory<?>) f).getOperator();
        return op instanceof AbstractUdfStreamOperator ? ((AbstractUdfStreamOperator<?, ?>) op).getUserFunction() : op;
    }

    @SuppressWarnings("unchecked")
    static List<StateSpec> specs(String kind, Object fn) throws ReflectiveOperationException {
        switch (kind) {
            case "group":
                return List.of(new StateSpec("accState", "value", null, InternalTypeInfo.ofFields((LogicalType[]) field(fn, "accTypes"))));
            case "dedup-first":
            case "dedup-last":
                // Flink 2.x keeps the first row by rowtime as a flag, the row only while it waits for the watermark
                if (fn.getClass().getSimpleName().equals("RowTimeDeduplicateKeepFirstRowFunction"))
                    return List.of(new StateSpec("waiting-to-emit-on-timer", "value", null, (TypeInformation<?>) field(fn, "typeInfo")),
                            new StateSpec("already-emitted-state-boolean", "value", null, Types.BOOLEAN));
                return List.of(new StateSpec("deduplicate-state", "value", null, (TypeInformation<?>) field(fn, "typeInfo")));
            case "join":
                return List.of(new StateSpec("left-records", "map", (TypeInformation<?>) field(fn, "leftType"), Types.INT),
                        new StateSpec("right-records", "map", (TypeInformation<?>) field(fn, "rightType"), Types.INT));
            case "topn":
                return List.of(new StateSpec("data-state-with-append", "map", (TypeInformation<?>) field(fn, "sortKeyType"),
                        new ListTypeInfo<>((TypeInformation<RowData>) field(fn, "inputRowType"))));
            default:
                return null;
        }
    }

    /** A row as the list of its fields, rendered. */
    static Object render(Object v, TypeInformation<?> t) {
        if (v == null) return null;
        if (v instanceof RowData) {
            RowData r = (RowData) v;
            List<LogicalType> types = ((InternalTypeInfo<?>) t).toLogicalType().getChildren();
            List<Object> out = new ArrayList<>();
            for (int i = 0; i < types.size(); i++) out.add(leaf(RowData.createFieldGetter(types.get(i), i).getFieldOrNull(r)));
            return out;
        }
        if (v instanceof List) {
            List<Object> out = new ArrayList<>();
            for (Object e : (List<?>) v) out.add(render(e, ((ListTypeInfo<?>) t).getElementTypeInfo()));
            return out;
        }
        return v;
    }

    static Object leaf(Object v) {
        if (v instanceof DecimalData) return ((DecimalData) v).toBigDecimal().toPlainString();
        if (v instanceof StringData) return v.toString();
        if (v instanceof TimestampData) {
            TimestampData t = (TimestampData) v;
            if (t.getNanoOfMillisecond() != 0) return "nanos " + t.getNanoOfMillisecond() + " not rendered";
            return SqlJob.tsText(t.getMillisecond());
        }
        return v;
    }

    /** Emits "STATE\tKEY\tJSON" per key and state (a map state: its entries, keys rendered as JSON text). */
    public static final class Read extends KeyedStateReaderFunction<RowData, String> {
        private final List<StateSpec> specs;
        private final TypeInformation<?> keyType;
        private transient List<Object> states;

        Read(List<StateSpec> specs, TypeInformation<?> keyType) {
            this.specs = specs;
            this.keyType = keyType;
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private void init() {
            states = new ArrayList<>();
            for (StateSpec s : specs) {
                if (s.kind.equals("value")) states.add(getRuntimeContext().getState(new ValueStateDescriptor(s.name, s.value)));
                else states.add(getRuntimeContext().getMapState(new MapStateDescriptor(s.name, s.key, s.value)));
            }
        }

        /** Flink 2.x (and 1.20's OpenContext path). */
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            init();
        }

        /** Flink 1.20 declares this one abstract. */
        public void open(Configuration c) {
            init();
        }

        @Override
        public void readKey(RowData key, Context ctx, Collector<String> out) throws Exception {
            List<?> k = (List<?>) render(key, keyType);
            String ks = k.size() == 1 ? String.valueOf(k.get(0)) : Main.JSON.writeValueAsString(k);
            for (int i = 0; i < specs.size(); i++) {
                StateSpec s = specs.get(i);
                Object v;
                if (s.kind.equals("value")) {
                    v = render(((ValueState<?>) states.get(i)).value(), s.value);
                    if (v == null) continue;
                } else {
                    Map<String, Object> m = new TreeMap<>();
                    for (Map.Entry<?, ?> e : ((MapState<?, ?>) states.get(i)).entries()) {
                        m.put(Main.JSON.writeValueAsString(render(e.getKey(), s.key)), render(e.getValue(), s.value));
                    }
                    if (m.isEmpty()) continue;
                    v = m;
                }
                out.collect(s.name + "\t" + ks + "\t" + Main.JSON.writeValueAsString(v));
            }
        }
    }

    /** Per kind of SQL operator: {"uid", "states": {STATE: {KEY: VALUE}}} or {"uid", "unread": WHY}. */
    static Map<String, Object> read(MiniCluster mc, Path sp, StreamGraph sg, List<Map<String, Object>> ops) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        for (StreamNode n : sg.getStreamNodes()) {
            String kind = null, uid = n.getTransformationUID();
            for (Map<String, Object> o : ops) if (o.get("name").equals(n.getOperatorName())) kind = (String) o.get("kind");
            if (kind == null) continue;
            Map<String, Object> r = Json.obj("uid", uid);
            out.put(kind, r);
            Object fn = operator(n);
            List<StateSpec> specs = specs(kind, fn);
            if (specs == null) {
                r.put("unread", "state in TimeWindow namespaces (" + fn.getClass().getSimpleName()
                        + "): SavepointReader.readKeyedState reads VoidNamespace only, and its window readers take DataStream windows, not the planner's");
                continue;
            }
            if (n.getStatePartitioners().length == 0) throw new IllegalStateException("no key selector on " + n.getOperatorName());
            TypeInformation<?> keyType = ((ResultTypeQueryable<?>) n.getStatePartitioners()[0]).getProducedType();
            StreamExecutionEnvironment env = new TestStreamEnvironment(mc, SqlJob.conf(), 1, Collections.emptyList(), Collections.emptyList());
            SavepointReader rd = SavepointReader.read(env, sp.toUri().toString(), new HashMapStateBackend());
            Map<String, Object> states = new TreeMap<>();
            @SuppressWarnings({"unchecked", "rawtypes"})
            CloseableIterator<String> it = rd.readKeyedState(OperatorIdentifier.forUid(uid), new Read(specs, keyType),
                    (TypeInformation) keyType, Types.STRING).executeAndCollect("ckpt-sql-spa-" + kind);
            int nread = 0;
            try (it) {
                while (it.hasNext()) {
                    String[] f = it.next().split("\t", 3);
                    @SuppressWarnings("unchecked")
                    Map<String, Object> s = (Map<String, Object>) states.computeIfAbsent(f[0], x -> new TreeMap<String, Object>());
                    s.put(f[1], Main.JSON.readValue(f[2], Object.class));
                    nread++;
                }
            }
            if (nread == 0) throw new IllegalStateException("State Processor API read nothing of " + kind + " (" + uid + ") in " + sp);
            r.put("states", states);
        }
        return out;
    }
}
