package ckpt.flink;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.state.table.SavepointTypeInformationFactory;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What Flink's SQL `savepoint` connector (flink-state-processor-api, Flink 2.1 on) reads of
 * SqlJob's GROUP BY aggregate: its key row through a SavepointTypeInformationFactory (the
 * connector infers no format for a ROW key), its "accState" with the serializer of the
 * savepoint's own snapshot (the connector's default for a column it has metadata of).  It fails:
 * the connector turns a ROW column's value into SQL through the getters of a Java class (isF0),
 * which the planner's BinaryRowData has not; the sidecar records the failure ("unread").
 */
final class SqlConnector {
    private SqlConnector() {}

    /** The key of SqlJob's keyed SQL operators: a row of one STRING. */
    public static final class StringKey implements SavepointTypeInformationFactory {
        @Override
        public TypeInformation<?> getTypeInformation() {
            return InternalTypeInfo.ofFields(new VarCharType(VarCharType.MAX_LENGTH));
        }
    }

    static Object leaf(Object v) {
        if (v instanceof BigDecimal) return ((BigDecimal) v).toPlainString();
        if (v instanceof LocalDateTime) return SqlJob.tsText(((LocalDateTime) v).toInstant(ZoneOffset.UTC).toEpochMilli());
        if (v instanceof Row) {
            Row r = (Row) v;
            List<Object> out = new ArrayList<>();
            for (int i = 0; i < r.getArity(); i++) out.add(leaf(r.getField(i)));
            return out;
        }
        return v;
    }

    /** {"ddl", "accState": {KEY: [accumulators]}} of the GROUP BY aggregate whose uid is uid, or {"ddl", "unread": WHY}. */
    static Map<String, Object> group(Path sp, String uid) throws Exception {
        TableEnvironment t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        t.getConfig().set("table.local-time-zone", "UTC");
        t.getConfig().set("parallelism.default", "1");
        String ddl = "CREATE TABLE grp (k ROW<f0 STRING>, accState ROW<f0 BIGINT, f1 DECIMAL(38, 2), f2 DECIMAL(10, 2), f3 TIMESTAMP(3)>,"
                + " PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'savepoint', 'state.backend.type' = 'hashmap',"
                + " 'state.path' = '" + sp.toUri() + "', 'operator.uid' = '" + uid + "',"
                + " 'fields.k.value-type-factory' = '" + StringKey.class.getName() + "')";
        t.executeSql(ddl);
        Map<String, Object> acc = new TreeMap<>();
        try (CloseableIterator<Row> it = t.executeSql("SELECT k.f0, accState FROM grp").collect()) {
            while (it.hasNext()) {
                Row r = it.next();
                acc.put((String) r.getField(0), leaf(r.getField(1)));
            }
        } catch (Exception e) {
            // the connector reads a ROW column's value through the getters of a Java class (isF0, getF0),
            // which the planner's RowData has not: it reads no RowData state (Flink 2.3.0)
            Throwable root = e;
            while (root.getCause() != null) root = root.getCause();
            return Json.obj("ddl", ddl, "unread", root.getClass().getName() + ": " + root.getMessage());
        }
        if (acc.isEmpty()) throw new IllegalStateException("the savepoint connector read nothing of " + uid + " in " + sp);
        return Json.obj("ddl", ddl, "accState", acc);
    }
}
