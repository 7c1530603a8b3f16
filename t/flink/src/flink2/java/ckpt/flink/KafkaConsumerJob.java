package ckpt.flink;

/**
 * FlinkKafkaConsumer is gone from flink-connector-kafka 4.0 on (this line's 5.0.0-2.2 has none):
 * the consumer job runs on the 1.20 line only (src/flink1).
 */
final class KafkaConsumerJob {
    static int main(String[] args) {
        System.err.println("kafka-consumer: flink-connector-kafka 5.0.0-2.2 has no FlinkKafkaConsumer (Flink 1.20 line only)");
        return 2;
    }
}
