package ckpt.flink;

import java.nio.file.Path;
import java.util.Map;

/** Flink 1.20 has no SQL `savepoint` connector (it came with Flink 2.1): SqlJob records so. */
final class SqlConnector {
    private SqlConnector() {}

    static Map<String, Object> group(Path sp, String uid) {
        return Json.obj("unread", "Flink 1.20 has no SQL savepoint connector (flink-state-processor-api has it from 2.1)");
    }
}
