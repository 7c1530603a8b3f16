package ckpt.flink;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * A job's state.storage.fs.memory-threshold (KafkaJob's kafka-hashmap-files-canonical).  Flink 2.x:
 * the job's configuration reaches the tasks' checkpoint storage, so there is nothing to add (the
 * 1.20 class sets the job's checkpoint storage itself).
 */
final class SmallFiles {
    private SmallFiles() {}

    static void threshold(StreamExecutionEnvironment env, Configuration c) {
        // the job's configuration carries it
    }
}
