package ckpt.flink;

import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.StateObject;

import java.io.DataInputStream;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** The sidecar of a _metadata file: what Flink's own Checkpoints.loadCheckpointMetadata reads from it. */
public final class Meta {
    private Meta() {}

    public static Map<String, Object> read(Path metadata) throws Exception {
        try (InputStream in = Files.newInputStream(metadata)) {
            return read(in, metadata.getParent().toAbsolutePath().toString());
        }
    }

    /** The _metadata of the checkpoint or savepoint at uri (any scheme Flink's FileSystem knows: s3://). */
    public static Map<String, Object> readUri(String uri) throws Exception {
        org.apache.flink.core.fs.Path p = new org.apache.flink.core.fs.Path(uri, "_metadata");
        try (InputStream in = p.getFileSystem().open(p)) {
            return read(in, uri);
        }
    }

    static Map<String, Object> read(InputStream in, String pointer) throws Exception {
        CheckpointMetadata md = Checkpoints.loadCheckpointMetadata(new DataInputStream(in), Meta.class.getClassLoader(), pointer);
        Map<String, Object> out = Json.obj("checkpoint_id", md.getCheckpointId(),
                "master_states", md.getMasterStates().size());
        Object props = call(md, "getCheckpointProperties");
        if (props != null) {
            Object type = call(props, "getCheckpointType");
            Object format = type == null ? null : call(type, "getFormatType");
            out.put("checkpoint_type", type == null ? null : call(type, "getName"));
            out.put("format_type", format == null ? null : format.toString());
        }
        List<Object> ops = new ArrayList<>();
        for (OperatorState os : md.getOperatorStates()) ops.add(operator(os));
        out.put("operators", ops);
        return out;
    }

    private static Map<String, Object> operator(OperatorState os) {
        Map<String, Object> o = Json.obj("id", os.getOperatorID().toHexString(),
                "uid", optional(call(os, "getOperatorUid")), "name", optional(call(os, "getOperatorName")),
                "parallelism", os.getParallelism(), "max_parallelism", os.getMaxParallelism(),
                "fully_finished", os.isFullyFinished(),
                "coordinator_bytes", os.getCoordinatorState() == null ? null : os.getCoordinatorState().getStateSize());
        List<Object> finished = new ArrayList<>();
        List<Object> subtasks = new ArrayList<>();
        Map<Integer, OperatorSubtaskState> st = new TreeMap<>(os.getSubtaskStates());
        for (Map.Entry<Integer, OperatorSubtaskState> e : st.entrySet()) {
            OperatorSubtaskState s = e.getValue();
            if (s.isFinished()) finished.add(e.getKey());
            List<Object> handles = new ArrayList<>();
            for (OperatorStateHandle h : s.getManagedOperatorState()) handles.add(opHandle("managed_operator", h));
            for (OperatorStateHandle h : s.getRawOperatorState()) handles.add(opHandle("raw_operator", h));
            for (KeyedStateHandle h : s.getManagedKeyedState()) handles.add(keyedHandle("managed_keyed", h));
            for (KeyedStateHandle h : s.getRawKeyedState()) handles.add(keyedHandle("raw_keyed", h));
            long in = 0, outBytes = 0;
            int inHandles = 0, outHandles = 0;
            for (StateObject h : s.getInputChannelState()) {
                in += h.getStateSize();
                inHandles++;
                handles.add(Json.obj("scope", "input_channel", "class", h.getClass().getSimpleName(), "size", h.getStateSize()));
            }
            Object upstream = call(s, "getUpstreamOutputBufferState");
            if (upstream != null) {
                for (Object x : (Iterable<?>) upstream) {
                    StateObject h = (StateObject) x;
                    in += h.getStateSize();
                    inHandles++;
                    handles.add(Json.obj("scope", "upstream_output_buffer", "class", h.getClass().getSimpleName(), "size", h.getStateSize()));
                }
            }
            for (StateObject h : s.getResultSubpartitionState()) {
                outBytes += h.getStateSize();
                outHandles++;
                handles.add(Json.obj("scope", "output_channel", "class", h.getClass().getSimpleName(), "size", h.getStateSize()));
            }
            subtasks.add(Json.obj("index", e.getKey(), "finished", s.isFinished(), "state_size", s.getStateSize(),
                    "input_channel_bytes", in, "output_channel_bytes", outBytes,
                    "input_channel_handles", inHandles, "output_channel_handles", outHandles, "handles", handles));
        }
        o.put("finished_subtasks", finished);
        o.put("subtasks", subtasks);
        return o;
    }

    private static Map<String, Object> opHandle(String scope, OperatorStateHandle h) {
        Map<String, Object> states = new TreeMap<>();
        for (Map.Entry<String, OperatorStateHandle.StateMetaInfo> e : h.getStateNameToPartitionOffsets().entrySet()) {
            List<Long> offs = new ArrayList<>();
            for (long x : e.getValue().getOffsets()) offs.add(x);
            states.put(e.getKey(), Json.obj("mode", e.getValue().getDistributionMode().toString(), "offsets", offs));
        }
        return Json.obj("scope", scope, "class", h.getClass().getSimpleName(), "size", h.getStateSize(), "states", states);
    }

    private static Map<String, Object> keyedHandle(String scope, KeyedStateHandle h) {
        Map<String, Object> m = Json.obj("scope", scope, "class", h.getClass().getSimpleName(), "size", h.getStateSize(),
                "checkpointed_size", h.getCheckpointedSize(),
                "key_groups", List.of(h.getKeyGroupRange().getStartKeyGroup(), h.getKeyGroupRange().getEndKeyGroup()));
        if (h instanceof KeyGroupsStateHandle) {
            KeyGroupsStateHandle k = (KeyGroupsStateHandle) h;
            List<Long> offs = new ArrayList<>();
            for (int g : k.getKeyGroupRange()) offs.add(k.getOffsetForKeyGroup(g));
            m.put("key_group_offsets", offs);
        }
        if (h instanceof IncrementalRemoteKeyedStateHandle) {
            IncrementalRemoteKeyedStateHandle k = (IncrementalRemoteKeyedStateHandle) h;
            m.put("shared_files", k.getSharedState().size());
            m.put("private_files", k.getPrivateState().size());
            m.put("checkpoint_id", k.getCheckpointId());
        }
        return m;
    }

    /** A method some Flink line lacks (operator uid and name in 2.x, say): its value, else null. */
    static Object call(Object target, String method) {
        try {
            Method m = target.getClass().getMethod(method);
            return m.invoke(target);
        } catch (NoSuchMethodException e) {
            return null;
        } catch (Exception e) {
            throw new RuntimeException(method, e);
        }
    }

    private static Object optional(Object o) {
        if (o instanceof Optional) return ((Optional<?>) o).orElse(null);
        return o;
    }
}
