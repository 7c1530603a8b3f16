package ckpt.flink;

import org.apache.flink.runtime.minicluster.MiniCluster;

import java.nio.file.Path;

/** The batch job with job recovery (FLIP-383): not written yet. */
final class Batch {
    private Batch() {}

    static void run(MiniCluster mc, Path out) {}
}
