package ckpt.flink;

import org.apache.avro.Schema;
import org.apache.avro.specific.SpecificRecordBase;

/** An Avro specific record written by hand (what avro-maven-plugin would generate, reduced): TypesJob's "specific" state. */
public class AvroSpec extends SpecificRecordBase {
    public static final Schema SCHEMA$ = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"AvroSpec\",\"namespace\":\"ckpt.flink\","
            + "\"fields\":[{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"count\",\"type\":\"int\"},"
            + "{\"name\":\"maybe\",\"type\":[\"null\",\"long\"]},{\"name\":\"score\",\"type\":\"double\"},"
            + "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}}]}");

    public CharSequence name;
    public int count;
    public Long maybe;
    public double score;
    public java.util.List<CharSequence> tags;

    public AvroSpec() {}

    public AvroSpec(String name, int count, Long maybe, double score, java.util.List<CharSequence> tags) {
        this.name = name;
        this.count = count;
        this.maybe = maybe;
        this.score = score;
        this.tags = tags;
    }

    @Override
    public Schema getSchema() {
        return SCHEMA$;
    }

    @Override
    public Object get(int i) {
        switch (i) {
            case 0: return name;
            case 1: return count;
            case 2: return maybe;
            case 3: return score;
            case 4: return tags;
            default: throw new IndexOutOfBoundsException("field " + i);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public void put(int i, Object v) {
        switch (i) {
            case 0: name = (CharSequence) v; break;
            case 1: count = (Integer) v; break;
            case 2: maybe = (Long) v; break;
            case 3: score = (Double) v; break;
            case 4: tags = (java.util.List<CharSequence>) v; break;
            default: throw new IndexOutOfBoundsException("field " + i);
        }
    }
}
