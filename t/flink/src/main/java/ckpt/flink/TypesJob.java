package ckpt.flink;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.IndexedRecord;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.formats.avro.typeutils.AvroSerializer;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * User types in keyed value state (issue 27 items 1, 4): a POJO with a nested POJO and a null
 * field, a POJO base class holding a registered subclass, an Avro specific and an Avro generic
 * record (union, enum, fixed, decimal, date, timestamps, array, map, bytes) and a Kryo-only type.
 * Savepoints of it (hashmap and RocksDB, canonical and native) go to types/ with
 * types/sidecar.json: "contents" (what the job put, rendered as ckpt-state(5) types them) and
 * "spa" (what the State Processor API reads back from each canonical savepoint, rendered alike).
 */
public final class TypesJob {
    private TypesJob() {}

    static final int KEYS = 6;
    static final AtomicLong seen = new AtomicLong();

    /** A nested POJO. */
    public static class Inner {
        public String label;
        public long n;
    }

    /** A POJO with a nested POJO and a field left null. */
    public static class Outer {
        public int id;
        public Inner inner;
        public String note;
        public double ratio;
    }

    /** A POJO base class; Sub is registered (pipeline.serialization-config), so written by its tag. */
    public static class Base {
        public String name;
    }

    public static class Sub extends Base {
        public int extra;
    }

    /** No default constructor, final field: not a POJO, so Kryo. */
    public static final class Opaque {
        private final String s;

        public Opaque(String s) {
            this.s = s;
        }

        @Override
        public String toString() {
            return s;
        }
    }

    static final String GENERIC_SCHEMA = "{\"type\":\"record\",\"name\":\"Reading\",\"namespace\":\"ckpt.avro\",\"fields\":["
            + "{\"name\":\"id\",\"type\":\"long\"},"
            + "{\"name\":\"label\",\"type\":[\"null\",\"string\"]},"
            + "{\"name\":\"color\",\"type\":{\"type\":\"enum\",\"name\":\"Color\",\"symbols\":[\"RED\",\"GREEN\",\"BLUE\"]}},"
            + "{\"name\":\"tag\",\"type\":{\"type\":\"fixed\",\"name\":\"Tag\",\"size\":4}},"
            + "{\"name\":\"amount\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":12,\"scale\":2}},"
            + "{\"name\":\"price\",\"type\":{\"type\":\"fixed\",\"name\":\"Price\",\"size\":5,\"logicalType\":\"decimal\",\"precision\":10,\"scale\":3}},"
            + "{\"name\":\"day\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"}},"
            + "{\"name\":\"at\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
            + "{\"name\":\"at_us\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}},"
            + "{\"name\":\"ratio\",\"type\":\"float\"},"
            + "{\"name\":\"flags\",\"type\":{\"type\":\"array\",\"items\":\"boolean\"}},"
            + "{\"name\":\"attrs\",\"type\":{\"type\":\"map\",\"values\":\"int\"}},"
            + "{\"name\":\"payload\",\"type\":\"bytes\"},"
            + "{\"name\":\"next\",\"type\":[\"null\",\"Reading\"]}]}";

    static Schema genericSchema() {
        return new Schema.Parser().parse(GENERIC_SCHEMA);
    }

    static Configuration conf(String backend) {
        Configuration c = new Configuration();
        c.set(StateBackendOptions.STATE_BACKEND, backend);
        c.set(PipelineOptions.SERIALIZATION_CONFIG, List.of("ckpt.flink.TypesJob$Sub: {type: pojo}"));
        return c;
    }

    // ---------------------------------------------------------------- the values, by key

    static Outer outer(int k) {
        Outer o = new Outer();
        o.id = k;
        o.ratio = k / 4.0;
        if (k % 3 != 2) {
            o.inner = new Inner();
            o.inner.label = "in" + k;
            o.inner.n = 1000L * k - 1;
        }
        if (k % 2 == 1) o.note = "odd \u00e9" + k;
        return o;
    }

    static Base pet(int k) {
        if (k % 2 == 0 || k == 5) {
            Base b = new Base();
            b.name = k == 5 ? null : "base" + k;
            return b;
        }
        Sub s = new Sub();
        s.name = "sub" + k;
        s.extra = -k;
        return s;
    }

    static AvroSpec spec(int k) {
        List<CharSequence> tags = new ArrayList<>();
        for (int i = 0; i < k % 3; i++) tags.add("t" + i);
        return new AvroSpec("spec" + k, k * 7, k % 2 == 0 ? null : (long) -k << 40, k + 0.5, tags);
    }

    static GenericRecord generic(Schema s, int k) {
        GenericRecord r = new GenericData.Record(s);
        r.put("id", (long) k);
        r.put("label", k % 2 == 0 ? "label" + k : null);
        r.put("color", new GenericData.EnumSymbol(s.getField("color").schema(), List.of("RED", "GREEN", "BLUE").get(k % 3)));
        r.put("tag", new GenericData.Fixed(s.getField("tag").schema(), new byte[] {'t', 'g', (byte) ('0' + k), (byte) (k == 3 ? 0xff : '!')}));
        r.put("amount", ByteBuffer.wrap(BigInteger.valueOf(k % 2 == 0 ? 12345L * k : -5L * k).toByteArray()));
        byte[] price = new byte[5];
        byte[] p = BigInteger.valueOf(-1234567L + k).toByteArray();
        java.util.Arrays.fill(price, (byte) 0xff);
        System.arraycopy(p, 0, price, 5 - p.length, p.length);
        r.put("price", new GenericData.Fixed(s.getField("price").schema(), price));
        r.put("day", 19000 + k * 400 - 30000);
        r.put("at", 1700000000123L + k * 86_400_000L * 40);
        r.put("at_us", -1234567L * (k + 1));
        r.put("ratio", k * 0.25f);
        List<Boolean> flags = new ArrayList<>();
        for (int i = 0; i < k; i++) flags.add(i % 2 == 0);
        r.put("flags", flags);
        Map<CharSequence, Integer> attrs = new TreeMap<>();
        for (int i = 0; i < k % 4; i++) attrs.put("a" + i, i * k);
        r.put("attrs", attrs);
        r.put("payload", ByteBuffer.wrap(k % 2 == 0 ? new byte[] {'p', (byte) ('0' + k)} : new byte[] {0, (byte) 0x80, (byte) k}));
        if (k == 4) r.put("next", generic(s, 1));
        return r;
    }

    // ---------------------------------------------------------------- rendered as ckpt-state(5) types them

    static Object entry(byte[] b) {
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            return Json.obj("base64", Base64.getEncoder().encodeToString(b));
        }
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] x = new byte[b.remaining()];
        b.duplicate().get(x);
        return x;
    }

    static Object avro(Object d, Schema s) {
        String logical = s.getLogicalType() == null ? null : s.getLogicalType().getName();
        switch (s.getType()) {
            case NULL: return null;
            case UNION: return avro(d, s.getTypes().get(GenericData.get().resolveUnion(s, d)));
            case RECORD: {
                Map<String, Object> m = new LinkedHashMap<>();
                for (Schema.Field f : s.getFields()) m.put(f.name(), avro(((IndexedRecord) d).get(f.pos()), f.schema()));
                return m;
            }
            case ENUM: return d.toString();
            case ARRAY: {
                List<Object> l = new ArrayList<>();
                for (Object x : (List<?>) d) l.add(avro(x, s.getElementType()));
                return l;
            }
            case MAP: {
                Map<String, Object> m = new TreeMap<>();
                for (Map.Entry<?, ?> e : ((Map<?, ?>) d).entrySet()) m.put(e.getKey().toString(), avro(e.getValue(), s.getValueType()));
                return m;
            }
            case FIXED: case BYTES: {
                byte[] b = d instanceof ByteBuffer ? bytes((ByteBuffer) d) : ((GenericData.Fixed) d).bytes();
                if ("decimal".equals(logical)) {
                    int scale = ((org.apache.avro.LogicalTypes.Decimal) s.getLogicalType()).getScale();
                    return new BigDecimal(new BigInteger(b), scale).toPlainString();
                }
                return entry(b);
            }
            case INT:
                if ("date".equals(logical)) return LocalDate.ofEpochDay((Integer) d).toString();
                return d;
            case LONG:
                if ("timestamp-millis".equals(logical))
                    return DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC).format(Instant.ofEpochMilli((Long) d));
                if ("timestamp-micros".equals(logical)) {
                    long v = (Long) d;
                    Instant t = Instant.ofEpochSecond(Math.floorDiv(v, 1_000_000L), Math.floorMod(v, 1_000_000L) * 1000L);
                    return DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC).format(t);
                }
                return d;
            case FLOAT: return (double) (Float) d;
            case STRING: return d.toString();
            default: return d;
        }
    }

    static Object pojo(Object v) {
        if (v == null) return null;
        if (v instanceof Outer) {
            Outer o = (Outer) v;
            Map<String, Object> in = null;
            if (o.inner != null) in = Json.obj("label", o.inner.label, "n", o.inner.n);
            return Json.obj("id", o.id, "inner", in, "note", o.note, "ratio", o.ratio);
        }
        if (v instanceof Sub) {
            Sub s = (Sub) v;
            return Json.obj("subclass", Sub.class.getName(), "tag", 0, "value", Json.obj("extra", s.extra, "name", s.name));
        }
        return Json.obj("name", ((Base) v).name);
    }

    /** Every state of key k rendered: {"pojo": ..., "pet": ..., "specific": ..., "generic": ..., "kryo": class}. */
    static Map<String, Object> render(Outer o, Base pet, AvroSpec spec, GenericRecord gen, Opaque opaque) {
        return Json.obj("pojo", pojo(o), "pet", pojo(pet), "specific", avro(spec, AvroSpec.SCHEMA$),
                "generic", avro(gen, gen.getSchema()), "kryo", opaque == null ? null : Opaque.class.getName());
    }

    // ---------------------------------------------------------------- the job

    static final class States {
        ValueState<Outer> pojo;
        ValueState<Base> pet;
        ValueState<AvroSpec> spec;
        ValueState<GenericRecord> gen;
        ValueState<Opaque> kryo;

        States(org.apache.flink.api.common.functions.RuntimeContext c) {
            pojo = c.getState(new ValueStateDescriptor<>("pojo", TypeInformation.of(Outer.class)));
            pet = c.getState(new ValueStateDescriptor<>("pet", TypeInformation.of(Base.class)));
            spec = c.getState(new ValueStateDescriptor<>("specific", new AvroSerializer<>(AvroSpec.class)));
            gen = c.getState(new ValueStateDescriptor<>("generic", new AvroSerializer<>(GenericRecord.class, genericSchema())));
            kryo = c.getState(new ValueStateDescriptor<>("kryo", TypeInformation.of(Opaque.class)));
        }
    }

    /** Emits the keys k0..k5 once, then idles until cancelled. */
    public static final class Keys extends LegacySource<String> implements StateJob.Cancellable {
        private volatile boolean running = true;

        public boolean running() {
            return running;
        }

        @Override
        protected void produce(Out<String> out) throws Exception {
            for (int k = 0; k < KEYS; k++) out.emit("k" + k);
            StateJob.idle(this);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    public static final class Put extends KeyedProcessFunction<String, String, String> {
        private transient States st;

        @Override
        public void processElement(String key, Context ctx, Collector<String> out) throws Exception {
            if (st == null) st = new States(getRuntimeContext());
            int k = Integer.parseInt(key.substring(1));
            st.pojo.update(outer(k));
            st.pet.update(pet(k));
            st.spec.update(spec(k));
            st.gen.update(generic(genericSchema(), k));
            st.kryo.update(new Opaque("opaque" + k));
            seen.incrementAndGet();
        }
    }

    public static final class Read extends KeyedStateReaderFunction<String, String> {
        private transient States st;

        /** Flink 2.x (and 1.20's OpenContext path). */
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            st = new States(getRuntimeContext());
        }

        /** Flink 1.20 declares this one abstract. */
        public void open(Configuration c) {
            st = new States(getRuntimeContext());
        }

        @Override
        public void readKey(String key, Context ctx, Collector<String> out) throws Exception {
            GenericRecord g = st.gen.value();
            Map<String, Object> m = render(st.pojo.value(), st.pet.value(), st.spec.value(), g, st.kryo.value());
            out.collect(key + "\t" + Main.JSON.writeValueAsString(m));
        }
    }

    static JobClient start(MiniCluster mc, String backend) throws Exception {
        StreamExecutionEnvironment env = new TestStreamEnvironment(mc, conf(backend), 1, Collections.emptyList(), Collections.emptyList());
        env.setMaxParallelism(32);
        env.addSource(new Keys()).uid("types-src").name("types-src").returns(Types.STRING)
                .keyBy(x -> x, Types.STRING).process(new Put()).uid("types").name("types").returns(Types.STRING);
        seen.set(0);
        return env.executeAsync("ckpt-types-" + backend);
    }

    static Map<String, Object> spa(MiniCluster mc, Path sp) throws Exception {
        StreamExecutionEnvironment env = new TestStreamEnvironment(mc, conf("hashmap"), 1, Collections.emptyList(), Collections.emptyList());
        SavepointReader r = SavepointReader.read(env, sp.toUri().toString(), new HashMapStateBackend());
        Map<String, Object> out = new TreeMap<>();
        try (CloseableIterator<String> it = r.readKeyedState(OperatorIdentifier.forUid("types"), new Read(), Types.STRING, Types.STRING)
                .executeAndCollect("ckpt-types-spa")) {
            while (it.hasNext()) {
                String[] f = it.next().split("\t", 2);
                out.put(f[0], Main.JSON.readValue(f[1], LinkedHashMap.class));
            }
        }
        if (out.size() != KEYS) throw new IllegalStateException("State Processor API read " + out.size() + " keys of types in " + sp);
        return out;
    }

    /** Savepoints into out/types/, and types/sidecar.json. */
    public static void run(MiniCluster mc, Path out) throws Exception {
        Path dir = out.resolve("types");
        Files.createDirectories(dir);
        Map<String, Object> contents = new TreeMap<>();
        Schema s = genericSchema();
        for (int k = 0; k < KEYS; k++) contents.put("k" + k, render(outer(k), pet(k), spec(k), generic(s, k), new Opaque("opaque" + k)));
        Map<String, Object> spa = new TreeMap<>();
        List<Object> names = new ArrayList<>();
        for (String backend : List.of("hashmap", "rocksdb")) {
            JobClient c = start(mc, backend);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (seen.get() < KEYS) {
                if (System.nanoTime() > end) throw new IllegalStateException("timed out waiting for the types job");
                Thread.sleep(20);
            }
            for (SavepointFormatType f : List.of(SavepointFormatType.CANONICAL, SavepointFormatType.NATIVE)) {
                String name = "types-" + backend + "-" + f.name().toLowerCase();
                Main.savepoint(c, f, dir.resolve(name));
                names.add(name);
                if (f == SavepointFormatType.CANONICAL) spa.put(name, null);
            }
            Main.cancel(c, "types job (" + backend + ")");
        }
        for (String name : new ArrayList<>(spa.keySet())) spa.put(name, spa(mc, dir.resolve(name)));
        Json.save(dir.resolve("sidecar.json"), Json.obj("savepoints", names, "contents", contents, "spa", spa));
    }
}
