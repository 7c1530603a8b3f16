package ckpt.flink;

import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumState;
import org.apache.flink.connector.kafka.source.enumerator.TopicPartitionAndAssignmentStatus;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A KafkaSourceEnumState as JSON (KafkaJob): flink-connector-kafka 3.x keeps partitions, no offsets. */
final class KafkaEnum {
    private KafkaEnum() {}

    static Map<String, Object> json(KafkaSourceEnumState s) {
        List<Object> parts = new ArrayList<>();
        for (TopicPartitionAndAssignmentStatus x : s.partitions()) {
            parts.add(Json.obj("topic", x.topicPartition().topic(), "partition", x.topicPartition().partition(),
                    "status", x.assignmentStatus().toString()));
        }
        parts.sort(KafkaEnum::byPartition);
        return Json.obj("initial_discovery_finished", s.initialDiscoveryFinished(), "partitions", parts);
    }

    static int byPartition(Object a, Object b) {
        Map<?, ?> x = (Map<?, ?>) a, y = (Map<?, ?>) b;
        int c = ((String) x.get("topic")).compareTo((String) y.get("topic"));
        return c != 0 ? c : Integer.compare((Integer) x.get("partition"), (Integer) y.get("partition"));
    }
}
