package ckpt.flink;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.net.URI;

/**
 * A job's state.storage.fs.memory-threshold (KafkaJob's kafka-hashmap-files-canonical).  Flink 1.20:
 * set on the job's configuration alone it does not reach the tasks' checkpoint storage, which takes
 * the cluster's (the run's reader state stayed a ByteStreamStateHandle in the _metadata), so the job
 * gets a FileSystemCheckpointStorage of its checkpoint directory with the threshold itself.
 */
final class SmallFiles {
    private SmallFiles() {}

    @SuppressWarnings("deprecation")
    static void threshold(StreamExecutionEnvironment env, Configuration c) {
        if (!c.getOptional(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD).isPresent()) return;
        env.getCheckpointConfig().setCheckpointStorage(new FileSystemCheckpointStorage(
                URI.create(c.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY)),
                (int) c.get(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD).getBytes()));
    }
}
