package ckpt.flink;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.InflightDataRescalingDescriptor;
import org.apache.flink.runtime.checkpoint.JobManagerTaskRestore;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.StateAssignmentOperation;
import org.apache.flink.runtime.checkpoint.TaskStateSnapshot;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.executiongraph.DefaultExecutionGraph;
import org.apache.flink.runtime.executiongraph.ExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.ExecutionVertex;
import org.apache.flink.runtime.executiongraph.TestingDefaultExecutionGraphBuilder;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.AbstractChannelStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.StateObject;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;

import java.io.DataInputStream;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Flink's own state assignment as the oracle of ckpt-merge -P/-g (issue 32 item 4): each artifact's
 * _metadata loaded with Checkpoints.loadCheckpointMetadata, the job StateJob builds at other
 * parallelisms (or with an operator re-uided) turned into a JobGraph and an ExecutionGraph, and
 * Flink's StateAssignmentOperation run over it; what each new subtask's Execution then holds (its
 * JobManagerTaskRestore's TaskStateSnapshot) is written, per operator and subtask, to
 * assign/ARTIFACT-VARIANT.json in the shape of ckpt-merge's assignment (t/flink/assign.bats).
 */
public final class Assign {
    private Assign() {}

    static final List<Object> index = new ArrayList<>();

    /** Every artifact (name, path under out) at the parallelisms of the "to-N" restores, and re-uided. */
    static List<Object> run(Path out, List<Object> artifacts) throws Exception {
        ScheduledExecutorService ex = Executors.newSingleThreadScheduledExecutor();
        long t0 = System.nanoTime();
        try {
            for (Object o : artifacts) {
                Map<?, ?> a = (Map<?, ?>) o;
                String name = (String) a.get("name");
                // the changelog backend's: Flink hands a rescaled changelog handle on as a new object
                // (ChangelogStateBackendHandleImpl.getIntersection), which handle() cannot pair with
                // its old subtask; assign.bats compares the other artifacts
                if (name.startsWith("checkpoint-changelog")) continue;
                Path dir = out.resolve((String) a.get("path"));
                for (int to : new int[] {1, 2, 3}) one(out, ex, name, dir, "to-" + to, Restore.parallelism(to), Map.of(), false);
                // the broadcast operator re-uided: its state has no operator (allowNonRestoredState drops it)
                one(out, ex, name, dir, "reuid-allowed", Restore.parallelism(3), Map.of("broadcast", "broadcast-v2"), true);
            }
        } finally {
            ex.shutdownNow();
        }
        System.out.println("flink assign: " + index.size() + " assignments by StateAssignmentOperation in "
                + (System.nanoTime() - t0) / 1_000_000L + " ms");
        return index;
    }

    /** java ... ckpt.flink.Main assign OUT NAME=PATH...: the assignments of those artifacts (paths under OUT). */
    static int main(String[] args) throws Exception {
        Path out = java.nio.file.Paths.get(args[1]).toAbsolutePath();
        List<Object> artifacts = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            artifacts.add(Json.obj("name", kv[0], "path", kv[1]));
        }
        run(out, artifacts);
        System.out.println(Json.write(index));
        return 0;
    }

    static CheckpointMetadata load(Path dir) throws Exception {
        Path md = dir.resolve("_metadata");
        try (InputStream in = Files.newInputStream(md)) {
            return Checkpoints.loadCheckpointMetadata(new DataInputStream(in), Assign.class.getClassLoader(),
                    dir.toAbsolutePath().toString());
        }
    }

    static void one(Path out, ScheduledExecutorService ex, String artifact, Path dir, String variant,
            Map<String, Integer> p, Map<String, String> uids, boolean allowNonRestored) throws Exception {
        StateJob.newUids.clear();
        StateJob.newUids.putAll(uids);
        StreamGraph sg;
        try {
            Configuration conf = new Configuration();
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
            StateJob.build(env, p);
            sg = env.getStreamGraph();
            sg.setJobName("ckpt-assign");
        } finally {
            StateJob.newUids.clear();
        }
        Map<String, Object> job = Main.graph(sg);
        Map<String, Object> graph = Main.ckptGraph(sg, job);
        JobGraph jg = org.apache.flink.streaming.api.graph.StreamingJobGraphGenerator.createJobGraph(sg);

        CheckpointMetadata md = load(dir);
        // the old subtask of every handle: the objects the assigned handles wrap are the loaded ones
        IdentityHashMap<Object, Integer> oldSubtask = new IdentityHashMap<>();
        for (OperatorState os : md.getOperatorStates()) {
            for (Map.Entry<Integer, OperatorSubtaskState> e : os.getSubtaskStates().entrySet()) {
                for (StateObject h : handles(e.getValue())) {
                    oldSubtask.put(h, e.getKey());
                    Object d = delegate(h);
                    if (d != null) oldSubtask.put(d, e.getKey());
                }
            }
        }
        // Checkpoints.loadAndValidateCheckpoint: an operator the graph lacks is dropped when it has no
        // state (or with allowNonRestoredState), else the restore is refused
        java.util.Set<OperatorID> inGraph = new HashSet<>();
        for (JobVertex v : jg.getVertices()) {
            for (OperatorIDPair op : v.getOperatorIDs()) inGraph.add(op.getGeneratedOperatorID());
        }
        Map<OperatorID, OperatorState> states = new HashMap<>();
        List<Object> dropped = new ArrayList<>();
        String refused = null;
        for (OperatorState os : md.getOperatorStates()) {
            if (inGraph.contains(os.getOperatorID())) {
                states.put(os.getOperatorID(), os);
                continue;
            }
            boolean hasState = os.getCoordinatorState() != null
                    || os.getSubtaskStates().values().stream().anyMatch(OperatorSubtaskState::hasState);
            if (hasState && !allowNonRestored) refused = "no operator for the state of " + os.getOperatorID();
            if (hasState) dropped.add(os.getOperatorID().toHexString());
        }
        Map<String, Object> doc = Json.obj("artifact", artifact, "variant", variant, "path", out.relativize(dir).toString(),
                "parallelism", new TreeMap<>(p), "allow_non_restored_state", allowNonRestored, "job", job, "graph", graph,
                "checkpoint_id", md.getCheckpointId(), "dropped", dropped);
        if (refused == null) {
            DefaultExecutionGraph eg = TestingDefaultExecutionGraphBuilder.newBuilder().setJobGraph(jg).build(ex);
            java.util.Set<ExecutionJobVertex> tasks = new HashSet<>(eg.getAllVertices().values());
            try {
                sao(md.getCheckpointId(), tasks, states, allowNonRestored).assignStates();
            } catch (Exception e) {
                refused = Main.flinkMessage(e);
            }
            if (refused == null) doc.put("operators", assigned(eg, oldSubtask));
        }
        doc.put("accepted", refused == null);
        if (refused != null) doc.put("message", refused);
        Path f = out.resolve("assign").resolve(artifact + "-" + variant + ".json");
        Json.save(f, doc);
        index.add(Json.obj("artifact", artifact, "variant", variant, "sidecar", out.relativize(f).toString()));
    }

    /** StateAssignmentOperation: 2.x adds recoverOutputOnDownstreamTask (off unless configured). */
    static StateAssignmentOperation sao(long id, java.util.Set<ExecutionJobVertex> tasks, Map<OperatorID, OperatorState> states,
            boolean allow) throws Exception {
        for (Constructor<?> c : StateAssignmentOperation.class.getConstructors()) {
            if (c.getParameterCount() == 4) return (StateAssignmentOperation) c.newInstance(id, tasks, states, allow);
            if (c.getParameterCount() == 5) return (StateAssignmentOperation) c.newInstance(id, tasks, states, allow, false);
        }
        throw new IllegalStateException("no StateAssignmentOperation constructor");
    }

    /** Per operator id: vertex, and per new subtask what its Execution's task restore holds. */
    static Map<String, Object> assigned(DefaultExecutionGraph eg, IdentityHashMap<Object, Integer> old) throws Exception {
        Map<String, Object> ops = new TreeMap<>();
        for (ExecutionJobVertex v : eg.getVerticesTopologically()) {
            List<OperatorIDPair> ids = v.getOperatorIDs();
            for (OperatorIDPair op : ids) {
                OperatorID id = op.getGeneratedOperatorID();
                List<Object> subtasks = new ArrayList<>();
                for (ExecutionVertex ev : v.getTaskVertices()) {
                    JobManagerTaskRestore r = ev.getCurrentExecutionAttempt().getTaskRestore();
                    Map<String, Object> s = Json.obj("index", ev.getParallelSubtaskIndex(), "restored", r != null);
                    if (r != null) {
                        TaskStateSnapshot t = r.getTaskStateSnapshot();
                        s.put("restore_checkpoint_id", r.getRestoreCheckpointId());
                        s.put("task_finished", t.isTaskFinished());
                        s.put("task_deployed_as_finished", t.isTaskDeployedAsFinished());
                        OperatorSubtaskState st = t.getSubtaskStateByOperatorID(id);
                        s.put("has_operator_state", st != null);
                        if (st != null) {
                            s.put("finished", st.isFinished());
                            List<Object> hs = new ArrayList<>();
                            for (OperatorStateHandle h : st.getManagedOperatorState()) hs.add(handle("managed_operator", h, old));
                            for (OperatorStateHandle h : st.getRawOperatorState()) hs.add(handle("raw_operator", h, old));
                            for (KeyedStateHandle h : st.getManagedKeyedState()) hs.add(handle("managed_keyed", h, old));
                            for (KeyedStateHandle h : st.getRawKeyedState()) hs.add(handle("raw_keyed", h, old));
                            for (StateObject h : st.getInputChannelState()) hs.add(handle("input_channel", h, old));
                            for (StateObject h : st.getResultSubpartitionState()) hs.add(handle("output_channel", h, old));
                            Object up = Meta.call(st, "getUpstreamOutputBufferState");
                            if (up != null) for (Object h : (Iterable<?>) up) hs.add(handle("upstream_output_buffer", (StateObject) h, old));
                            s.put("handles", hs);
                            s.put("input_rescaling", rescaling(st.getInputRescalingDescriptor()));
                            s.put("output_rescaling", rescaling(st.getOutputRescalingDescriptor()));
                        }
                    }
                    subtasks.add(s);
                }
                ops.put(id.toHexString(), Json.obj("vertex", v.getJobVertexId().toString(), "name", v.getName(),
                        "parallelism", v.getParallelism(), "max_parallelism", v.getMaxParallelism(),
                        "head", op == ids.get(ids.size() - 1), "tail", op == ids.get(0), "subtasks", subtasks));
            }
        }
        return ops;
    }

    static List<StateObject> handles(OperatorSubtaskState s) {
        List<StateObject> l = new ArrayList<>();
        l.addAll(s.getManagedOperatorState());
        l.addAll(s.getRawOperatorState());
        l.addAll(s.getManagedKeyedState());
        l.addAll(s.getRawKeyedState());
        l.addAll(s.getInputChannelState());
        l.addAll(s.getResultSubpartitionState());
        Object up = Meta.call(s, "getUpstreamOutputBufferState");
        if (up != null) for (Object h : (Iterable<?>) up) l.add((StateObject) h);
        return l;
    }

    /** The stream handle a handle wraps (the file or inline bytes): its identity survives repartitioning. */
    static Object delegate(Object h) {
        for (String m : new String[] {"getDelegateStateHandle", "getDelegate", "getMetaStateHandle", "getMetaDataStateHandle"}) {
            try {
                Object d = h.getClass().getMethod(m).invoke(h);
                if (d != null) return d;
            } catch (NoSuchMethodException e) {
                // next
            } catch (Exception e) {
                throw new RuntimeException(m, e);
            }
        }
        return null;
    }

    static Map<String, Object> handle(String scope, StateObject h, IdentityHashMap<Object, Integer> old) throws Exception {
        Object d = delegate(h);
        Integer o = old.get(h);
        if (o == null && d != null) o = old.get(d);
        Map<String, Object> m = Json.obj("scope", scope, "class", h.getClass().getSimpleName(), "size", h.getStateSize(),
                "old_subtask", o, "path", d instanceof FileStateHandle ? ((FileStateHandle) d).getFilePath().getName()
                        : h instanceof FileStateHandle ? ((FileStateHandle) h).getFilePath().getName() : null);
        if (h instanceof OperatorStateHandle) {
            Map<String, Object> states = new TreeMap<>();
            for (Map.Entry<String, OperatorStateHandle.StateMetaInfo> e
                    : ((OperatorStateHandle) h).getStateNameToPartitionOffsets().entrySet()) {
                List<Long> offs = new ArrayList<>();
                for (long x : e.getValue().getOffsets()) offs.add(x);
                states.put(e.getKey(), Json.obj("mode", e.getValue().getDistributionMode().toString(), "offsets", offs));
            }
            m.put("states", states);
        }
        if (h instanceof KeyedStateHandle) {
            org.apache.flink.runtime.state.KeyGroupRange r = ((KeyedStateHandle) h).getKeyGroupRange();
            m.put("key_groups", List.of(r.getStartKeyGroup(), r.getEndKeyGroup()));
        }
        if (h instanceof AbstractChannelStateHandle) {
            AbstractChannelStateHandle<?> c = (AbstractChannelStateHandle<?>) h;
            m.put("channel", info(c.getInfo()));
            m.put("offsets", new ArrayList<>(c.getOffsets()));
        } else if (Meta.call(h, "getInfos") != null) {
            List<Object> infos = new ArrayList<>();
            for (Object i : (List<?>) Meta.call(h, "getInfos")) infos.add(info(i));
            m.put("channels", infos);
        }
        return m;
    }

    /** InputChannelInfo (gate, channel) or ResultSubpartitionInfo (partition, subpartition). */
    static Map<String, Object> info(Object i) {
        if (i instanceof org.apache.flink.runtime.checkpoint.channel.InputChannelInfo) {
            org.apache.flink.runtime.checkpoint.channel.InputChannelInfo c = (org.apache.flink.runtime.checkpoint.channel.InputChannelInfo) i;
            return Json.obj("gate", c.getGateIdx(), "channel", c.getInputChannelIdx());
        }
        org.apache.flink.runtime.checkpoint.channel.ResultSubpartitionInfo r = (org.apache.flink.runtime.checkpoint.channel.ResultSubpartitionInfo) i;
        return Json.obj("partition", r.getPartitionIdx(), "subpartition", r.getSubPartitionIdx());
    }

    /** An InflightDataRescalingDescriptor: per gate (partition) its old subtasks, ambiguous ones, type. */
    static Object rescaling(InflightDataRescalingDescriptor d) throws Exception {
        if (d == null) return null;
        if (d == InflightDataRescalingDescriptor.NO_RESCALE) return "NO_RESCALE";
        Field f = InflightDataRescalingDescriptor.class.getDeclaredField("gateOrPartitionDescriptors");
        f.setAccessible(true);
        Object[] gates = (Object[]) f.get(d);
        List<Object> l = new ArrayList<>();
        for (int g = 0; g < gates.length; g++) {
            Object x = gates[g];
            Map<String, Object> m = Json.obj("index", g);
            if (x == InflightDataRescalingDescriptor.InflightDataGateOrPartitionRescalingDescriptor.NO_STATE) m.put("no_state", true);
            List<Integer> olds = new ArrayList<>();
            for (int i : (int[]) field(x, "oldSubtaskIndexes")) olds.add(i);
            m.put("old_subtasks", olds);
            m.put("ambiguous", new java.util.TreeSet<>((Collection<?>) field(x, "ambiguousSubtaskIndexes")));
            m.put("type", String.valueOf(field(x, "mappingType")));
            m.put("mappings", String.valueOf(field(x, "rescaledChannelsMappings")));
            l.add(m);
        }
        return l;
    }

    static Object field(Object o, String name) throws Exception {
        Field f = o.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.get(o);
    }
}
