package ckpt.flink;

import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumState;
import org.apache.flink.connector.kafka.source.enumerator.SplitAndAssignmentStatus;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A KafkaSourceEnumState as JSON (KafkaJob): flink-connector-kafka 4.x and 5.x keep splits with offsets. */
final class KafkaEnum {
    private KafkaEnum() {}

    static Map<String, Object> json(KafkaSourceEnumState s) {
        List<Object> splits = new ArrayList<>();
        for (SplitAndAssignmentStatus x : s.splits()) {
            Map<String, Object> m = KafkaJob.kafkaSplit(x.split());
            m.put("status", x.assignmentStatus().toString());
            splits.add(m);
        }
        splits.sort(KafkaEnum::byPartition);
        return Json.obj("initial_discovery_finished", s.initialDiscoveryFinished(), "splits", splits);
    }

    static int byPartition(Object a, Object b) {
        Map<?, ?> x = (Map<?, ?>) a, y = (Map<?, ?>) b;
        int c = ((String) x.get("topic")).compareTo((String) y.get("topic"));
        return c != 0 ? c : Integer.compare((Integer) x.get("partition"), (Integer) y.get("partition"));
    }
}
